"""The workflow a fork publishes with (.github/workflows/course.yml) and the one setting it is driven by
(tools/fork.py): the workflow is a valid GitHub Actions workflow that runs the README's two commands, and
pointing the course at another repository changes every address derived from it."""

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "course.yml"
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "github-workflow.json").read_text())
sys.path.insert(0, str(ROOT / "tools"))

import fork  # noqa: E402


def workflow() -> dict:
    # YAML 1.1 reads the key `on` as True; GitHub reads it as "on"
    data = yaml.safe_load(WORKFLOW.read_text())
    return {("on" if k is True else k): v for k, v in data.items()}


def schema_errors(data: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]


def test_the_workflow_follows_github_actions_schema():
    data = workflow()
    assert schema_errors(data) == []
    broken = copy.deepcopy(data)  # the control: a job with a key GitHub does not know
    broken["jobs"]["test"]["run-on"] = "ubuntu-24.04"
    assert schema_errors(broken)


def test_every_script_of_the_workflow_is_valid_bash():
    scripts = [s["run"] for job in workflow()["jobs"].values() for s in job.get("steps", []) if "run" in s]
    assert len(scripts) >= 3
    for script in scripts:
        done = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
        assert done.returncode == 0, (script, done.stderr)


def test_it_runs_the_readmes_test_command_then_builds_and_deploys_main_only():
    jobs = workflow()["jobs"]
    runs = {name: " ".join(s.get("run", "") for s in job.get("steps", [])) for name, job in jobs.items()}
    assert "bash .ci/run" in runs["test"] and "CI=true" in runs["test"]
    assert "bash tools/build.sh" in runs["site"]
    upload = [
        s for s in jobs["site"]["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact")
    ]
    assert upload and upload[0]["with"]["path"] == "_build/html"
    assert jobs["site"]["needs"] == "test" and jobs["deploy"]["needs"] == "site"
    assert jobs["site"]["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    assert set(jobs["deploy"]["permissions"]) == {"pages", "id-token"}  # only the deploy job may write
    assert workflow()["permissions"] == {"contents": "read"}
    readme = (ROOT / "README.md").read_text()
    assert "bash tools/test.sh" in readme and "bash tools/build.sh" in readme
    assert "exec bash tools/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_the_workflow_checks_that_the_one_setting_is_this_repositorys():
    steps = [s.get("run", "") for s in workflow()["jobs"]["test"]["steps"]]
    assert any("tools/fork.py --check" in s and "github.repository" in s for s in steps)
    url, _, _ = fork.current()
    assert fork.main(["--check", url]) == 0
    assert fork.main(["--check", "https://github.com/someone-else/attention"]) == 1


@pytest.mark.parametrize(
    "repository, site",
    [
        (
            "https://github.com/octo-org/course",
            "https://octo-org.github.io/course/",
        ),
        ("https://github.com/Kim-Lab/attention_ko", "https://kim-lab.github.io/attention_ko/"),
        ("https://github.com/kim/kim.github.io", "https://kim.github.io/"),
    ],
)
def test_the_site_address_is_where_github_pages_serves_the_repository(repository, site):
    assert fork.pages_url(repository) == site


@pytest.mark.parametrize(
    "bad", ["github.com/a/b", "https://gitlab.com/a/b", "https://github.com/a", "https://github.com/a/b/c"]
)
def test_an_address_that_is_not_a_github_repository_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="repository must be https://github.com/OWNER/NAME"):
        fork.pages_url(bad)


@pytest.mark.slow
def test_a_fork_changes_every_address_derived_from_the_repository(tmp_path):
    """In a clone, tools/fork.py with another repository: no file of the course (tracked or generated) names
    the old repository or site any more, and the setup cells, the Colab editions and _config.yml name the
    new."""
    clone = tmp_path / "fork"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    old_url, _, old_site = fork.current()
    new_url, new_site = "https://github.com/kim-lab/attention-ko", "https://kim-lab.github.io/attention-ko/"
    done = subprocess.run(
        [sys.executable, "tools/fork.py", new_url], cwd=clone, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    # what keeps the old address on purpose: notebooks frozen as the grader saw them before a change
    frozen = re.compile(r"^tests/exercises/fixtures/")
    stale = [
        f
        for f in files
        if not frozen.match(f)
        and (clone / f).is_file()
        and re.search(
            re.escape(old_url) + "|" + re.escape(old_site.rstrip("/")), (clone / f).read_text(errors="ignore")
        )
    ]
    assert stale == []
    assert fork.pages_url(new_url) == new_site
    setup_cells = [f for f in files if f.endswith(".ipynb") and f.startswith(("chapters/", "exercises/0"))]
    for f in setup_cells:
        assert f"git+{new_url}@main" in (clone / f).read_text(), f
    editions = [f for f in files if f.startswith("colab/") and f.endswith(".ipynb")]
    assert editions and all(new_site in (clone / f).read_text() for f in editions)
    assert f"url: {new_url}" in (clone / "_config.yml").read_text()

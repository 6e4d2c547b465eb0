"""Point the course at another repository: the one setting a fork changes, and everything derived from it.

    python tools/fork.py https://github.com/OWNER/NAME [--branch main]   # set it and regenerate
    python tools/fork.py --check https://github.com/OWNER/NAME           # exit 1 unless it is set so

_config.yml holds the repository (`repository.url`, `repository.branch`); the website's address follows from
it as GitHub Pages serves a project (`html.baseurl` = https://OWNER.github.io/NAME/). Derived from those two,
and regenerated here: the standard setup cell of every notebook (its Colab branch installs attnlib from the
repository: tools/sync_setup_cell.py), the exercise sets' learner notebooks and bundles (tools/exercises.py
build), the Korean pages (tools/i18n.py generate) and the Colab editions, whose links point at the website
(tools/colab_edition.py); the README's mentions of the site and the repository are rewritten. The website's
Colab buttons are Jupyter Book's, from `repository` at build time.
The workflow .github/workflows/course.yml runs `--check` with the repository it runs in, so a fork that has
not run this fails with the command to run.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "_config.yml"
GITHUB = re.compile(
    r"^https://github\.com/(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/(?P<name>[A-Za-z0-9._-]{1,100})/?$"
)
# What regenerates the files derived from the repository, in order (each reads _config.yml).
REGENERATE = [
    ["tools/sync_setup_cell.py"],
    ["tools/exercises.py", "build"],
    ["tools/i18n.py", "generate"],
    ["tools/colab_edition.py"],
]


def pages_url(repository: str) -> str:
    """The GitHub Pages address of a project repository's site."""
    m = GITHUB.match(repository)
    if not m:
        raise ValueError(f"repository must be https://github.com/OWNER/NAME, not {repository!r}")
    owner, name = m["owner"], m["name"]
    if name.lower() == f"{owner.lower()}.github.io":  # a user or organisation site is served at the root
        return f"https://{owner.lower()}.github.io/"
    return f"https://{owner.lower()}.github.io/{name}/"


def current() -> tuple[str, str, str]:
    """(repository url, branch, html.baseurl) as _config.yml holds them. Read with the standard library, not
    notebooks.repository(): the workflow runs --check before any environment with PyYAML exists, and
    set_config edits the lines in place so that _config.yml keeps its comments."""
    text = CONFIG.read_text()

    def value(key: str, section: str) -> str:
        block = re.search(rf"^{section}:\n((?:[ \t]+.*\n|\s*\n)+)", text, re.M)
        m = block and re.search(rf"^[ \t]+{key}:[ \t]*(\S+)", block.group(1), re.M)
        if not m:
            raise SystemExit(f"_config.yml: {section}.{key} is missing")
        return m.group(1).strip("\"'")

    return value("url", "repository"), value("branch", "repository"), value("baseurl", "html")


def set_config(repository: str, branch: str) -> None:
    """Write the repository, its branch and the site's address into _config.yml, its comments kept."""
    text = CONFIG.read_text()
    old = dict(zip(("url", "branch", "baseurl"), current(), strict=True))
    new = {"url": repository, "branch": branch, "baseurl": pages_url(repository)}
    for key, value in new.items():
        line = re.compile(rf"^([ \t]+{key}:[ \t]*){re.escape(old[key])}", re.M)
        text = line.sub(lambda m, v=value: m.group(1) + v, text, count=1)
    CONFIG.write_text(text)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("repository", help="https://github.com/OWNER/NAME")
    parser.add_argument("--branch", default="main", help="the branch the Colab setup cells install from")
    parser.add_argument("--check", action="store_true", help="only say whether _config.yml is set so")
    args = parser.parse_args(argv)
    repository = args.repository.rstrip("/")
    try:
        site = pages_url(repository)
    except ValueError as e:
        parser.error(str(e))
    url, branch, base = current()
    if args.check:
        if url.lower() == repository.lower() and base == site:
            print(f"fork: _config.yml points at {url} (site {base})")
            return 0
        print(
            f"fork: _config.yml points at {url} (site {base}), not at {repository} (site {site}).\n"
            f"Run: python tools/fork.py {repository} --branch {branch}; commit what it changed."
        )
        return 1
    set_config(repository, args.branch)
    # the README names the site and the repository in its text (the Korean edition's line)
    readme = ROOT / "README.md"
    readme.write_text(readme.read_text().replace(base, site).replace(url, repository))
    print(f"fork: _config.yml now points at {repository} ({args.branch}); the site is {site}")
    for command in REGENERATE:
        done = subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
            raise SystemExit(f"fork: {' '.join(command)} failed")
        print(f"fork: regenerated ({' '.join(command)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The numeric environment (tools/numeric_env.py): every kernel that executes a notebook runs under it,
whatever the caller's environment says, and a machine that cannot reproduce the stored outputs is told why."""

import datetime
import json
import os
import subprocess
import sys

import nbformat
import numeric_env
import pytest
from notebooks import ROOT

PROBE = ROOT / "tests" / "tooling" / "numeric_env_probe.ipynb"
# What a caller might have in its environment: another processor's kernels, more threads, a GPU.
HOSTILE = {
    "ATEN_CPU_CAPABILITY": "default",
    "OMP_NUM_THREADS": "2",
    "MKL_NUM_THREADS": "2",
    "PYTHONHASHSEED": "7",
}


needs_avx2 = pytest.mark.usefixtures("reproducing_notebooks")  # conftest.py


def hostile_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in numeric_env.PINNED}
    env.update(HOSTILE)
    return env


def nbval_probe(*extra: str) -> subprocess.CompletedProcess:
    """pytest --nbval on the probe notebook, started from an environment without the pin."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "--nbval", str(PROBE), *extra]
    return subprocess.run(command, cwd=ROOT, env=hostile_env(), capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # starts kernels or a probe process that imports torch
@needs_avx2
def test_kernels_that_nbval_starts_run_under_the_pin_whatever_the_caller_set():
    done = nbval_probe()
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.slow  # starts kernels or a probe process that imports torch
@needs_avx2
def test_the_probe_notices_when_the_pin_is_missing():
    """Positive control: without the repository's conftest.py (it applies the pin) the same probe fails."""
    done = nbval_probe("--noconftest")
    assert done.returncode == 1 and "DEFAULT 2" in done.stdout, done.stdout[-3000:]


@pytest.mark.slow  # starts kernels or a probe process that imports torch
@needs_avx2
def test_execute_notebooks_runs_its_kernels_under_the_pin(tmp_path):
    nb = nbformat.read(PROBE, 4)
    nb.cells[0].outputs = []
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    script = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'tools')!r}); import execute_notebooks as e; "
        f"e.execute(e.Path({str(path)!r}))"
    )
    subprocess.run([sys.executable, "-c", script], env=hostile_env(), check=True, timeout=300)
    printed = [o.text for c in nbformat.read(path, 4).cells for o in c.get("outputs", []) if "text" in o]
    assert printed[-1] == "AVX2 1 False 0\n"


def test_execute_notebooks_refuses_to_store_outputs_a_machine_cannot_reproduce(tmp_path, monkeypatch, capsys):
    import execute_notebooks

    path = tmp_path / "probe.ipynb"
    path.write_text(PROBE.read_text())
    monkeypatch.setattr(numeric_env, "check", lambda: "its matrix products round differently")
    assert execute_notebooks.main([str(path)]) == 1
    assert "cannot store outputs made here: its matrix products round differently" in capsys.readouterr().out
    assert path.read_text() == PROBE.read_text()


def test_the_pin_names_every_library_that_picks_kernels_by_processor():
    assert numeric_env.PINNED["ATEN_CPU_CAPABILITY"] == "avx2"
    assert numeric_env.PINNED["MKL_ENABLE_INSTRUCTIONS"] == numeric_env.PINNED["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    assert numeric_env.PINNED["OMP_NUM_THREADS"] == numeric_env.PINNED["MKL_NUM_THREADS"] == "1"


def test_exports_are_shell_lines_for_every_pinned_variable():
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "numeric_env.py"), "--exports"], capture_output=True, text=True
    )
    assert done.stdout.splitlines() == [f"export {k}={v}" for k, v in numeric_env.PINNED.items()]


@pytest.mark.parametrize(
    "facts,why",
    [
        (("aarch64", "DEFAULT", 1, False), "aarch64 machine"),
        (("x86_64", "DEFAULT", 1, False), "runs its DEFAULT kernels here"),
        (("x86_64", "AVX2", 2, False), "the pin did not take effect"),
        (("x86_64", "AVX2", 1, True), "the pin did not take effect"),
    ],
)
def test_a_machine_that_cannot_reproduce_is_told_why(facts, why):
    assert why in numeric_env.verdict(*facts)


def test_an_avx2_x86_machine_under_the_pin_reproduces():
    assert numeric_env.verdict("x86_64", "AVX2", 1, False) is None
    assert numeric_env.verdict("x86_64", "AVX2", 1, False, True) is None


def test_a_machine_whose_matrix_products_round_otherwise_is_told_so():
    assert "matrix products round differently" in numeric_env.verdict("x86_64", "AVX2", 1, False, False)


@pytest.mark.slow  # starts a process that imports torch
@pytest.mark.parametrize("kind", sorted(numeric_env.FINGERPRINTS))
def test_a_fingerprint_changed_in_its_last_bits_is_reproduced_nowhere(kind, tmp_path, monkeypatch):
    """Positive control for the probe: whichever machine each kind was made on, with one of its numbers
    changed in its last bits no machine reproduces it, and the reason names the kind."""
    fingerprint = json.loads(numeric_env.FINGERPRINTS[kind].read_text())
    changed = json.loads(json.dumps(fingerprint))
    changed["expected"]["frob"]["values"][-1] *= 1 + 2**-20  # a few float32 units in the last place
    path = tmp_path / "fingerprint.json"
    path.write_text(json.dumps(changed))
    monkeypatch.setitem(numeric_env.FINGERPRINTS, kind, path)
    assert numeric_env.probe(kind=kind)[4] is False
    assert f"the machine {numeric_env.WHAT[kind]} were made on" in numeric_env.check(kind=kind)


def test_the_data_fingerprint_holds_set_1s_recorded_numbers():
    """The package data's machine (the AVX-512 AMD EPYC) is recognised by the norms set 1 q2's reference
    helper computed there for its public example, as the committed table holds them."""
    fingerprint = json.loads(numeric_env.FINGERPRINTS["data"].read_text())
    public = json.loads((ROOT / "attnlib" / "grading" / "public" / "01_rnn_gradients.json").read_text())
    for way in fingerprint["expected"].values():
        assert json.dumps(way["values"]) in public["tests"]["q2.py"]


def test_both_fingerprints_start_from_the_same_inputs_and_say_where_they_were_made():
    notebooks, data = (json.loads(numeric_env.FINGERPRINTS[k].read_text()) for k in ("notebooks", "data"))
    assert (notebooks["W_h"], notebooks["pre"]) == (data["W_h"], data["pre"])
    assert notebooks["made_on"] and "AMD EPYC" in data["what"]


@pytest.mark.slow  # starts a process that imports torch
def test_recording_makes_this_machine_the_one_a_kind_was_made_on(tmp_path, monkeypatch):
    path = tmp_path / "fingerprint.json"
    stale = json.loads(numeric_env.FINGERPRINTS["notebooks"].read_text())
    stale["expected"]["frob"]["values"][0] += 1.0  # some other machine's numbers
    path.write_text(json.dumps(stale))
    monkeypatch.setitem(numeric_env.FINGERPRINTS, "notebooks", path)
    assert numeric_env.check(kind="notebooks") is not None
    assert numeric_env.record("notebooks") == path
    assert numeric_env.check(kind="notebooks") is None
    recorded = json.loads(path.read_text())
    assert recorded["W_h"] == stale["W_h"] and recorded["what"] == stale["what"]
    assert recorded["made_on"].endswith(datetime.date.today().isoformat())


@pytest.mark.parametrize("argv", [["--check", "outputs"], ["--record"], ["--record", "all"]])
def test_a_kind_that_does_not_exist_is_refused_by_name(argv):
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "numeric_env.py"), *argv], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert f"{argv[0]}: the kind must be one of notebooks, data, not" in done.stderr


def test_a_rebase_runs_every_notebook_or_none(capsys, monkeypatch):
    import execute_notebooks

    monkeypatch.setattr(execute_notebooks, "execute", lambda path: pytest.fail("a notebook ran"))
    assert execute_notebooks.main(["--rebase", "chapters/03_dot_product_attention.ipynb"]) == 2
    assert "give no paths, not chapters/03_dot_product_attention.ipynb" in capsys.readouterr().out


def test_a_rebase_records_the_fingerprint_only_after_every_notebook_ran(tmp_path, monkeypatch, capsys):
    """On a machine that cannot reproduce the notebooks (an AVX2 x86 whose fingerprint differs): a plain run
    is refused; a rebase whose second notebook fails (a claim false on the new numbers) records nothing; one
    where every notebook runs records this machine, after the last chapter and the exercise build."""
    import execute_notebooks

    notebooks = [tmp_path / "chapters" / "a.ipynb", tmp_path / "chapters" / "b.ipynb"]
    ran, recorded, failing = [], [], {1}  # the second notebook fails until failing is cleared

    def execute(path):
        ran.append(path)
        if notebooks.index(path) in failing:
            raise RuntimeError("a claim of the prose is false on this machine's numbers")
        return 1.0

    monkeypatch.setattr(numeric_env, "probe", lambda: ("x86_64", "AVX2", 1, False, False))
    monkeypatch.setattr(numeric_env, "check", lambda: "its matrix products round differently")
    monkeypatch.setattr(numeric_env, "record", lambda kind: recorded.append((kind, list(ran))) or tmp_path)
    monkeypatch.setattr(execute_notebooks, "course_notebooks", lambda: notebooks)
    monkeypatch.setattr(execute_notebooks, "exercise_build", lambda: ran.append("the exercise build"))
    monkeypatch.setattr(execute_notebooks, "execute", execute)
    monkeypatch.setattr(execute_notebooks.colab_edition, "write", lambda paths: None)
    monkeypatch.setattr(execute_notebooks, "ROOT", tmp_path)

    assert execute_notebooks.main([]) == 1 and ran == []
    assert "cannot store outputs made here: its matrix products round differently" in capsys.readouterr().out
    with pytest.raises(RuntimeError, match="a claim of the prose"):
        execute_notebooks.main(["--rebase"])
    assert recorded == []  # the notebooks' machine is still the old one
    failing.clear()
    ran.clear()
    assert execute_notebooks.main(["--rebase"]) == 0
    assert recorded == [("notebooks", [*notebooks, "the exercise build"])]

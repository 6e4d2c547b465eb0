"""The numeric environment (tools/numeric_env.py): every kernel that executes a notebook runs under it,
whatever the caller's environment says, and a machine that cannot reproduce the stored outputs is told why."""

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


needs_avx2 = pytest.mark.usefixtures("reproducing_machine")  # conftest.py


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
def test_the_fingerprint_holds_the_recorded_numbers_and_a_changed_one_is_noticed(tmp_path, monkeypatch):
    """The probe recomputes set 1's recorded norms (numeric_fingerprint.json, made on the reference machine):
    the file holds the numbers of the committed recording, and with one number changed in its last bits no
    machine reproduces it."""
    import json

    fingerprint = json.loads(numeric_env.FINGERPRINT.read_text())
    public = json.loads((ROOT / "attnlib" / "grading" / "public" / "01_rnn_gradients.json").read_text())
    for way in fingerprint["expected"].values():
        assert json.dumps(way["values"]) in public["tests"]["q2.py"]
    changed = json.loads(json.dumps(fingerprint))
    changed["expected"]["frob"]["values"][-1] *= 1 + 2**-20  # a few float32 units in the last place
    path = tmp_path / "numeric_fingerprint.json"
    path.write_text(json.dumps(changed))
    monkeypatch.setattr(numeric_env, "FINGERPRINT", path)
    assert numeric_env.probe()[4] is False
    assert "matrix products round differently" in numeric_env.check()

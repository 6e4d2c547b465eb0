"""The course's one numeric environment: the settings under which every stored number is made and compared.

    python tools/numeric_env.py --exports     # `export NAME=value` lines for a shell (tools/test.sh evals)
    python tools/numeric_env.py --check       # exit 0 if this machine reproduces the stored notebook outputs
    python tools/numeric_env.py --check data  # ... the stored results, trained weights and reference tables
    python tools/numeric_env.py --record notebooks  # this machine becomes the notebooks' machine
                                              # (tools/execute_notebooks.py --rebase, once every notebook ran)

torch picks its CPU kernels by processor: AVX2 on one machine, AVX-512 on the next, plain C on an ARM laptop.
The kernels round differently, a trained model drifts in the third decimal within a few hundred steps, and a
notebook's stored outputs no longer match. Everything that executes a notebook or compares numbers (the test
command, tools/execute_notebooks.py, the exercise build and grading, the benchmarks) runs under ``PINNED``:

- ``ATEN_CPU_CAPABILITY=avx2``: torch's own vectorised kernels use their AVX2 versions on every x86-64
  processor that has AVX2, whatever more it has (AVX-512, AVX-VNNI). Measured on an AVX-512 AMD EPYC: with
  this alone all 160 chapter cells reproduced outputs made on another machine of the same kind.
- ``MKL_ENABLE_INSTRUCTIONS=AVX2`` and ``ONEDNN_MAX_CPU_ISA=AVX2``: the same cap for the matrix products
  (MKL) and oneDNN's kernels; with all three, chapters 1 and 8, the two that differed with the first alone,
  reproduced too. ``MKL_CBWR=AVX2`` was measured and left out: it switches MKL to another, slower code path
  whose results differ from the stored ones, and the three caps already reproduce across those machines.
- One thread (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``): a reduction split over threads adds in another order,
  so the thread count is part of the numbers. One thread is also the fair share on a busy machine: with two
  CPU-bound neighbours, two OpenMP threads per kernel spin against each other (a 60-step training went from
  4.4 s to 29.5 s), one thread only waits its turn. The test command gets its parallelism from running
  notebooks side by side instead.
- ``CUDA_VISIBLE_DEVICES=`` (no GPU): the stored outputs are CPU outputs; a GPU machine still reproduces them.
- ``PYTHONHASHSEED=0``: set iteration order. The notebooks seed torch themselves.

These variables are read when a process starts (torch reads them on import), so they must be in the
environment of every kernel, not set from inside one. Where torch cannot run its AVX2 kernels (no AVX2, an
ARM laptop) the stored numbers cannot be reproduced: ``check`` says so and the test command executes the
notebooks without comparing their outputs. The caps are not enough everywhere: on an Intel Xeon with AMX
(2026-11-28) MKL multiplied even 3x3 float32 matrices in another order than on the EPYC (the last bit of a
norm differed, and chapter 1's stored outputs with it). So ``check`` also recomputes a few numbers that the
machine the stored numbers were made on computed, and asks for them bit for bit (``FINGERPRINTS``).

Two kinds of stored number, each with the machine it was made on (its fingerprint file says which):

- ``notebooks``: the stored outputs of the chapters and exercise notebooks, which the test command compares
  (nbval) and the prose's claims read. They are re-made in a few minutes, all at once, on whatever machine
  the course is maintained on (``tools/execute_notebooks.py --rebase``: every notebook runs, every claim of
  the prose is checked on the new run, then this machine's numbers become the fingerprint). Since 2026-11-29
  that is the Intel Xeon (model 167, AVX-512 and AMX, 2 cores) the course's sessions have run on since
  2026-11-28.
- ``data``: the package data that scripts compute and the test command recomputes bit for bit (the stored
  results of ``tools/stored_results.py``, the trained weights of ``tools/pretrained.py``, the exercise sets'
  reference tables). They take about an hour and a half of CPU to re-make and stay as the AVX-512 AMD EPYC
  made them; on another machine their recomputations are skipped, each test saying why.

No setting makes that Xeon reproduce chapter 1 (measured 2026-11-28, torch 2.13.0 with MKL 2024.2 linked in).
The first op that differs is MKL's ``sgemm``, the only MKL call in chapter 1's training (``MKL_VERBOSE=1``).
The smallest recorded case is exercise set 5 q3's ``step_reference``: one step of a GRU (``nn.GRU``, inputs of
size 7, hidden size 4). Under the pin, ``s_t[1, 0]`` comes out -0.17471563816070557 against the recorded
-0.17471551895141602 (8 ulps), and ``s_t[1, 2]`` 0.8044759631156921 against 0.8044760227203369. Settings added
to the pin: ``MKL_CBWR`` = COMPATIBLE, SSE2, SSSE3, SSE4_1, SSE4_2, AVX, with or without STRICT (each matches
the fingerprint, not this step), ``MKL_ENABLE_INSTRUCTIONS=SSE4_2`` (the same), ``MKL_CBWR=AVX2`` or
``AVX512``, ``ATEN_CPU_CAPABILITY=default``: none gives the recorded step. Only MKL's own non-Intel dispatch
does. MKL chooses its code path from the CPU vendor (``mkl_serv_intel_cpu_true``), and an LD_PRELOAD library
that makes that function (and ``mkl_serv_intel_cpu``) return 0 gives every committed reference table of sets
1-9 and the fingerprint bit for bit. Even so, chapter 1's training still differs (5 cells, 7 without the
library): 200 Adam steps of a 32-unit RNN end at another accuracy (seed 0, k = 10: 0.294 or 0.300 against the
stored 0.258). Replacing every ``sgemm`` by a plain in-order float32 sum, fused or not, does not give the
stored accuracies either. So the EPYC's kernels are not known exactly enough to be copied here.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import MutableMapping
from datetime import date
from pathlib import Path

PINNED: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "CUDA_VISIBLE_DEVICES": "",
    "PYTHONHASHSEED": "0",
}
# What torch reports from inside a process started under PINNED, on a machine that reproduces.
EXPECTED_CAPABILITY = "AVX2"
EXPECTED_THREADS = 1
# Numbers the machine each kind of stored number was made on computed: recomputed by the probe.
TOOLS = Path(__file__).resolve().parent
FINGERPRINTS = {
    "notebooks": TOOLS / "numeric_fingerprint_notebooks.json",
    "data": TOOLS / "numeric_fingerprint.json",
}
WHAT = {
    "notebooks": "the stored notebook outputs",
    "data": "the stored results, trained weights and reference tables",
}
PROBE = """
import json, platform, sys, torch

def tensor(d):  # the recorded form of a tensor (attnlib.grading.checks.to_data)
    return torch.tensor(d["values"], dtype=torch.float64).to(getattr(torch, d["tensor"])).reshape(d["shape"])

def recorded(t):  # the same form, of a 1-D float32 tensor
    return {"shape": list(t.shape), "tensor": "float32", "values": t.tolist()}

f = json.load(open(sys.argv[1]))
W_h, pre = tensor(f["W_h"]), tensor(f["pre"])
factor = lambda z: (1 - torch.tanh(z) ** 2)[:, None] * W_h  # diag(tanh'(z)) W_h
right = left = oldest = torch.eye(W_h.shape[0], dtype=W_h.dtype)
ways = {"right": [], "left": [], "oldest": [], "frob": []}
for k in range(1, pre.shape[0] + 1):
    right, left, oldest = right @ factor(pre[-k]), factor(pre[-k]) @ left, factor(pre[k - 1]) @ oldest
    ways["right"].append(torch.linalg.matrix_norm(right, ord=2))
    ways["left"].append(torch.linalg.matrix_norm(left, ord=2))
    ways["oldest"].append(torch.linalg.matrix_norm(oldest, ord=2))
    ways["frob"].append(torch.linalg.norm(right))
computed = {k: recorded(torch.stack(v)) for k, v in ways.items()}
same = [computed == json.load(open(path))["expected"] for path in sys.argv[2:]]
print(platform.machine(), torch.backends.cpu.get_cpu_capability(), torch.get_num_threads(),
      torch.cuda.is_available(), *same)
print(json.dumps(computed))
"""


def apply(env: MutableMapping[str, str] | None = None) -> MutableMapping[str, str]:
    """Put the pinned settings into ``env`` (default: this process's environment, for its children)."""
    env = os.environ if env is None else env
    env.update(PINNED)
    return env


def pinned_env() -> dict[str, str]:
    """A copy of this process's environment with the pinned settings, for a child process."""
    return apply(dict(os.environ))


def verdict(
    machine: str, capability: str, threads: int, cuda: bool, fingerprint: bool = True, kind: str = "notebooks"
) -> str | None:
    """None if a process reporting these facts under the pin reproduces the stored numbers of ``kind``, else
    why not. ``fingerprint``: whether it computed the numbers of the machine they were made on
    (``FINGERPRINTS[kind]``) bit for bit."""
    if machine.lower() not in ("x86_64", "amd64"):
        return f"this is a {machine} machine, and the stored outputs were made with x86-64 AVX2 kernels"
    if capability != EXPECTED_CAPABILITY:
        return (
            f"torch runs its {capability} kernels here even when asked for AVX2 (the processor has no AVX2), "
            "and the stored outputs were made with its AVX2 kernels"
        )
    if threads != EXPECTED_THREADS or cuda:
        return (
            f"the pin did not take effect (threads {threads}, a GPU visible: {cuda}): "
            "run the command from tools/ rather than calling pytest directly"
        )
    if not fingerprint:
        return (
            f"this processor's matrix products round differently from those of the machine {WHAT[kind]} "
            f"were made on (the products of 3x3 float32 matrices in {FINGERPRINTS[kind].name} differ in "
            "their last bits: MKL picks its kernels by processor, even when capped at AVX2)"
        )
    return None


def _run_probe(python: str) -> tuple[list[str], dict]:
    """The probe's facts (one flag per kind, in FINGERPRINTS' order) and the numbers it computed. Its inputs
    come from the first fingerprint (both hold the same, tested), its expected numbers from each."""
    paths = [str(FINGERPRINTS[kind]) for kind in FINGERPRINTS]
    out = subprocess.run(
        [python, "-c", PROBE, paths[0], *paths], env=pinned_env(), capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return out[0].split(), json.loads(out[1])


def probe(python: str = sys.executable, kind: str = "notebooks") -> tuple[str, str, int, bool, bool]:
    """(machine, CPU capability, threads, cuda, fingerprint of ``kind`` reproduced) as a fresh process started
    under the pin reports them."""
    if kind not in FINGERPRINTS:
        raise ValueError(f"kind must be one of {sorted(FINGERPRINTS)}, not {kind!r}")
    facts, _ = _run_probe(python)
    return (
        facts[0],
        facts[1],
        int(facts[2]),
        facts[3] == "True",
        facts[4 + list(FINGERPRINTS).index(kind)] == "True",
    )


def check(python: str = sys.executable, kind: str = "notebooks") -> str | None:
    """None if this machine reproduces the stored numbers of ``kind`` under the pin, else the reason."""
    return verdict(*probe(python, kind), kind=kind)


def record(kind: str, python: str = sys.executable) -> Path:
    """Make this machine the one ``kind``'s stored numbers were made on: write the numbers its pinned probe
    computes into ``FINGERPRINTS[kind]`` (the inputs and the description stay). Refuses a machine whose pin
    does not take effect, where nothing would reproduce anyway."""
    facts, computed = _run_probe(python)
    reason = verdict(facts[0], facts[1], int(facts[2]), facts[3] == "True", kind=kind)
    if reason is not None:
        raise RuntimeError(f"cannot record a fingerprint here: {reason}")
    path = FINGERPRINTS[kind]
    fingerprint = json.loads(path.read_text())
    fingerprint["expected"], fingerprint["made_on"] = computed, f"{processor()}, {date.today().isoformat()}"
    path.write_text(json.dumps(fingerprint, indent=1) + "\n")
    return path


def processor() -> str:
    """The processor's name, family and model (Linux: /proc/cpuinfo): where recorded numbers were made."""
    cpuinfo = Path("/proc/cpuinfo")
    facts: dict[str, str] = {}
    for line in cpuinfo.read_text().splitlines() if cpuinfo.exists() else []:
        name, _, value = line.partition(":")
        facts.setdefault(name.strip(), value.strip())
    if "model name" not in facts:
        return platform.processor() or platform.machine()
    return f"{facts['model name']} (family {facts.get('cpu family')}, model {facts.get('model')})"


def main(argv: list[str]) -> int:
    if argv == ["--exports"]:
        for name, value in PINNED.items():
            print(f"export {name}={value}")
        return 0
    if argv[:1] in (["--check"], ["--record"]) and len(argv) <= 2:
        kind = argv[1] if len(argv) == 2 else "notebooks" if argv[0] == "--check" else None
        if kind not in FINGERPRINTS:
            print(
                f"{argv[0]}: the kind must be one of {', '.join(FINGERPRINTS)}, not {kind!r}", file=sys.stderr
            )
            return 2
        if argv[0] == "--record":
            print(f"recorded this machine's numbers in {record(kind).relative_to(TOOLS.parent)}")
            return 0
        reason = check(kind=kind)
        if reason is None:
            print(
                f"numeric environment: {platform.machine()}, torch {EXPECTED_CAPABILITY} kernels, 1 thread: "
                f"{WHAT[kind]} reproduce here"
            )
            return 0
        print(reason)
        return 1
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""torch.compile on the batched attention path of chapter 7, against eager and the fused SDPA kernel.

Run:  .venv/bin/python benchmarks/compile_attention.py [--out=attnlib/results/ch07_compile_cpu.json]

Runs under the course's numeric environment (tools/numeric_env.py: AVX2 kernels, one thread), with a fresh
Inductor cache (a cold compile, as a learner's first run meets it). For each size n = T = S it compiles
the three calls of chapter 7's fully batched path with static shapes, times the first call (the compile)
in wall and CPU seconds (this process, and its compile workers once they have exited), then takes the
fastest of 20 calls of eager, compiled and fused (``attnlib.fast.run``), taking turns after a warm-up, and
checks that all three give the same context.
Adds the figures, the machine and the load under this torch's version (run it once with each torch the
chapter describes) to the package data that chapter 7 reads through
``attnlib.stored`` (compile times depend on the torch version and the machine: the file names both).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT))
import numeric_env  # noqa: E402

numeric_env.apply()  # before torch is imported: it reads these variables when it loads
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-")  # a cold compile

import torch  # noqa: E402
from timing import describe, fastest, fully_batched  # noqa: E402

from attnlib import fast, lengths_to_mask  # noqa: E402

B, D, SIZES, REPEATS = 8, 64, (64, 512), 20


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    out = ROOT / "attnlib/results/ch07_compile_cpu.json"
    for arg in sys.argv[1:]:
        name, _, value = arg.removeprefix("--").partition("=")
        if name != "out" or not value:
            raise SystemExit(f"unknown option {arg!r}; valid: --out=PATH")
        out = Path(value)
    torch.manual_seed(0)
    machine = describe(torch.device("cpu"))
    sizes = []
    with torch.no_grad():
        for n in SIZES:
            Q, H = torch.randn(B, n, D) / D**0.25, torch.randn(B, n, D) / D**0.25
            mask = lengths_to_mask(torch.randint(n // 2, n + 1, (B,)), n)  # (B, S)
            padding, prepared = ~mask[:, None, :], fast.prepare(Q, H, H, mask)
            compiled = torch.compile(fully_batched, dynamic=False)
            wall, cpu = time.perf_counter(), cpu_seconds()
            context = compiled(Q, H, padding)
            compile_wall, compile_cpu = time.perf_counter() - wall, cpu_seconds() - cpu
            expected = fully_batched(Q, H, padding)
            assert torch.allclose(context, expected, atol=1e-5)
            assert torch.allclose(fast.run(prepared, scale=1.0), expected, atol=1e-5)
            calls = {
                "eager": partial(fully_batched, Q, H, padding),
                "compiled": partial(compiled, Q, H, padding),
                "fused": partial(fast.run, prepared, scale=1.0),
            }
            best = fastest(calls, torch.device("cpu"), REPEATS)
            sizes.append(
                {
                    "n": n,
                    "compile_wall_s": round(compile_wall, 1),
                    "compile_cpu_s": round(compile_cpu, 1),
                    **{f"{name}_ms": round(seconds * 1e3, 4) for name, seconds in best.items()},
                }
            )
            print(sizes[-1], flush=True)
    machine["load_average_1min_after"] = describe(torch.device("cpu")).get("load_average_1min")
    runs = json.loads(out.read_text())["table"] if out.exists() else {}
    runs[torch.__version__] = {"environment": machine, "shape": {"B": B, "d": D}, "sizes": sizes}
    result = {
        "name": out.stem,
        "description": "chapter 7's batched path: eager, torch.compile (static shapes, cold cache) "
        "and fused SDPA, per torch version",
        "recipe": "benchmarks/compile_attention.py",
        "environment": {"torch": sorted(runs), "device": machine["device"]},
        "table": dict(sorted(runs.items())),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

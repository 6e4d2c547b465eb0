"""torch.compile on the batched attention path of chapter 7, against eager and the fused SDPA kernel.

Run:  .venv/bin/python benchmarks/compile_attention.py [--out=benchmarks/results/compile_cpu.json]

Runs under the course's numeric environment (tools/numeric_env.py: AVX2 kernels, one thread), with a fresh
Inductor cache (a cold compile, as a learner's first run meets it). For each size n = T = S it compiles
the three calls of chapter 7's fully batched path with static shapes, times the first call (the compile)
in wall and CPU seconds (this process, and its compile workers once they have exited), then takes the
fastest of 20 calls of eager, compiled and fused (``attnlib.fast.run``) after a warm-up, and checks that
all three give the same context.
Writes the figures, the machine and the versions to a JSON file that chapter 7 shows.
"""

from __future__ import annotations

import json
import math
import os
import platform
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import numeric_env  # noqa: E402

numeric_env.apply()  # before torch is imported: it reads these variables when it loads
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-")  # a cold compile

import torch  # noqa: E402

from attnlib import fast, lengths_to_mask  # noqa: E402

B, D, SIZES, REPEATS = 8, 64, (64, 512), 20


def fully_batched(Q, H, padding):
    """Chapter 7's batched path: padding (B, 1, S) is True where there is no word."""
    E = Q @ H.transpose(-2, -1)  # (B, T, S)
    return torch.softmax(E.masked_fill(padding, -math.inf), dim=-1) @ H  # (B, T, d)


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def fastest_ms(fn) -> float:
    fn()
    best = math.inf
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def main() -> None:
    out = ROOT / "benchmarks/results/compile_cpu.json"
    for arg in sys.argv[1:]:
        name, _, value = arg.removeprefix("--").partition("=")
        if name != "out" or not value:
            raise SystemExit(f"unknown option {arg!r}; valid: --out=PATH")
        out = Path(value)
    torch.manual_seed(0)
    load_before = os.getloadavg()[0]
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
            sizes.append(
                {
                    "n": n,
                    "compile_wall_s": round(compile_wall, 1),
                    "compile_cpu_s": round(compile_cpu, 1),
                    "eager_ms": round(fastest_ms(partial(fully_batched, Q, H, padding)), 4),
                    "compiled_ms": round(fastest_ms(partial(compiled, Q, H, padding)), 4),
                    "fused_ms": round(fastest_ms(partial(fast.run, prepared, scale=1.0)), 4),
                }
            )
            print(sizes[-1], flush=True)
    result = {
        "what": "chapter 7's batched path: eager, torch.compile (static shapes, cold cache), fused SDPA",
        "shape": {"B": B, "d": D, "T=S": list(SIZES)},
        "device": f"CPU: {cpu_name()}, {os.cpu_count()} cores",
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
        "load_average_1min": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "sizes": sizes,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

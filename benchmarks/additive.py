"""Additive attention, eager vs the course's fast path: memory kept for the backward pass, and time.

Run:  .venv/bin/python benchmarks/additive.py [--B=32] [--T=50] [--S=50] [--H=256] [--A=256] [--repeats=15]

Runs under the course's numeric environment (tools/numeric_env.py: AVX2 kernels, one thread).

    eager  attnlib.attend(attnlib.scores.additive(q, K, W_q, W_k, v), K, mask)   (keys = values = H)
    fast   attnlib.chunked_additive.additive_attend(q, K, K, W_q, W_k, v, mask)  (recomputing backward)

float32, a padding mask with one length per example, gradients for q, K, W_q, W_k and v.
Memory: the bytes of every tensor autograd saves for the backward pass (``saved_tensors_hooks``), in MiB,
summed as saved (a tensor saved twice counts twice) and over distinct storages (eager: about 82 MiB).
Time: forward + backward of one call, in ms, the median of ``repeats`` runs after a warm-up, the two paths
alternating so that a busy machine slows both alike.
Prints one ``name: value`` line per figure, then ``target_memory`` (fast <= 1/4 of eager) and
``target_time`` (fast <= eager): PASS or FAIL.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import numeric_env  # noqa: E402

numeric_env.apply()  # before torch is imported: it reads these variables when it loads

import torch  # noqa: E402

from attnlib import attend, lengths_to_mask, scores  # noqa: E402
from attnlib.chunked_additive import additive_attend  # noqa: E402


def options() -> dict[str, int]:
    values = {"B": 32, "T": 50, "S": 50, "H": 256, "A": 256, "repeats": 15}
    for arg in sys.argv[1:]:
        name, _, value = arg.removeprefix("--").partition("=")
        if name not in values:
            raise SystemExit(f"unknown option {arg!r}; valid: {', '.join('--' + n for n in values)}")
        values[name] = int(value)
    return values


def eager(q, K, W_q, W_k, v, mask):
    return attend(scores.additive(q, K, W_q, W_k, v), K, mask)[0]


def fast(q, K, W_q, W_k, v, mask):
    return additive_attend(q, K, K, W_q, W_k, v, mask, need_weights=False)[0]


def saved_mib(path, inputs) -> tuple[float, float]:
    """MiB of the tensors autograd saves for the backward pass of one call: summed as saved, and counting
    each storage once (eager's tanh output is saved twice, by tanh and by the product with v)."""
    total, storages = 0, {}

    def pack(x: torch.Tensor) -> torch.Tensor:
        nonlocal total
        total += x.numel() * x.element_size()
        storages[x.untyped_storage().data_ptr()] = x.untyped_storage().nbytes()
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        path(*inputs)
    return total / 2**20, sum(storages.values()) / 2**20


def forward_backward_ms(path, inputs) -> float:
    start = time.perf_counter()
    context = path(*inputs)
    context.square().sum().backward()
    return 1000 * (time.perf_counter() - start)


def main() -> None:
    o = options()
    torch.manual_seed(0)
    B, T, S, H, A = o["B"], o["T"], o["S"], o["H"], o["A"]
    leaf = lambda *shape: torch.randn(*shape).requires_grad_()  # noqa: E731
    q, K = leaf(B, T, H), leaf(B, S, H)  # decoder states, encoder states H (keys = values)
    W_q, W_k, v = (leaf(A, H) / H**0.5).detach().requires_grad_(), leaf(A, H).detach(), leaf(A)
    W_k = (W_k / H**0.5).requires_grad_()
    mask = lengths_to_mask(torch.randint(S // 2, S + 1, (B,)), S)  # (B, S) padding
    inputs = (q, K, W_q, W_k, v, mask)
    print(f"load_average_1min: {os.getloadavg()[0]:.2f}")
    print(f"threads: {torch.get_num_threads()}")
    print(f"shape: B={B} T={T} S={S} H={H} A={A} float32")

    saved = {name: saved_mib(path, inputs) for name, path in (("eager", eager), ("fast", fast))}
    print(f"saved_mib_eager: {saved['eager'][0]:.2f}")
    print(f"saved_mib_fast: {saved['fast'][0]:.2f}")
    print(f"saved_ratio_fast_over_eager: {saved['fast'][0] / saved['eager'][0]:.4f}")
    print(f"saved_distinct_mib_eager: {saved['eager'][1]:.2f}")
    print(f"saved_distinct_mib_fast: {saved['fast'][1]:.2f}")
    print(f"saved_distinct_ratio_fast_over_eager: {saved['fast'][1] / saved['eager'][1]:.4f}")

    times: dict[str, list[float]] = {"eager": [], "fast": []}
    for repeat in range(o["repeats"] + 2):  # two warm-up rounds
        for name, path in (
            (("eager", eager), ("fast", fast)) if repeat % 2 else (("fast", fast), ("eager", eager))
        ):
            for x in inputs[:5]:
                x.grad = None
            ms = forward_backward_ms(path, inputs)
            if repeat >= 2:
                times[name].append(ms)
    ms = {name: statistics.median(t) for name, t in times.items()}
    print(f"forward_backward_ms_eager: {ms['eager']:.1f}")
    print(f"forward_backward_ms_fast: {ms['fast']:.1f}")
    print(f"time_ratio_fast_over_eager: {ms['fast'] / ms['eager']:.3f}")
    quarter = all(saved["fast"][i] <= saved["eager"][i] / 4 for i in (0, 1))
    print(f"target_memory: {'PASS' if quarter else 'FAIL'}")
    print(f"target_time: {'PASS' if ms['fast'] <= ms['eager'] else 'FAIL'}")


if __name__ == "__main__":
    main()

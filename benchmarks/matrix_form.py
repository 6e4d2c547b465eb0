"""Chapter 7's measured tables: the batched path against the fused kernel as the scores outgrow the caches,
reduced precision, and additive attention's hand-written backward. Written as package data that the chapter
reads (attnlib/results/ch07_benchmark_<device>.json), with the machine that measured them.

    chrt -f 10 .venv/bin/python benchmarks/matrix_form.py           # CPU, the course's numeric environment
    python benchmarks/matrix_form.py --device=cuda                  # on a GPU machine: ..._cuda.json

On the CPU it runs under tools/numeric_env.py (AVX2 kernels, one thread), as the book does. Each time is the
fastest of ``--rounds`` calls, the configurations taking turns round after round so that a busy machine slows
them alike; on a shared machine, run it with a real-time priority (``chrt -f 10``, as root) so that no
ordinary process interrupts a call: the file records the scheduling policy and the load.

- ``scaling``: dot-product attention, d = 64, for (n = T = S, B) pairs whose scores tensor (B, n, n) spans
  0.5 to 32 MiB; pairs with the same bytes and different n tell a cost that follows the bytes (the caches)
  from one that follows n.
- ``precision``: the fused kernel in float32, bfloat16 and float16 at n = 512, B = 8: time and largest error
  against float64.
- ``additive_backward``: forward + backward of additive attention at a training batch's size (B = 32,
  T = S = 50, d = A = 256): ``attend`` on the (B, T, S, A) tensor against ``attnlib.chunked_additive``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT))
DEVICE = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--device=")), "cpu")
ROUNDS = int(next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--rounds=")), "8"))
if DEVICE == "cpu":
    import numeric_env  # noqa: E402

    numeric_env.apply()  # before torch is imported

import torch  # noqa: E402
from timing import describe, fastest, fully_batched  # noqa: E402

from attnlib import attend, fast, layers, lengths_to_mask, scores  # noqa: E402
from attnlib.chunked_additive import additive_attend  # noqa: E402

D = 64
SCALING = [(64, 8), (128, 8), (256, 8), (512, 8), (1024, 8), (128, 32), (256, 2), (512, 2), (512, 16)]
SCALING += [(1024, 2), (1024, 4)]


def inputs(n: int, B: int, device: torch.device, dtype=torch.float32):
    Q = (torch.randn(B, n, D, device=device) / D**0.25).to(dtype)  # (B, T, d): scores of order 1
    H = (torch.randn(B, n, D, device=device) / D**0.25).to(dtype)  # (B, S, d)
    mask = lengths_to_mask(torch.randint(n // 2, n + 1, (B,), device=device), n)  # (B, S)
    return Q, H, mask


def scaling(device: torch.device) -> list[dict]:
    calls = {}
    for n, B in SCALING:
        Q, H, mask = inputs(n, B, device)
        padding, prepared = ~mask[:, None, :], fast.prepare(Q, H, H, mask)
        reference = fully_batched(Q, H, padding)
        assert torch.allclose(fast.run(prepared, scale=1.0), reference, atol=1e-5), (n, B)
        calls[n, B, "batched"] = lambda Q=Q, H=H, p=padding: fully_batched(Q, H, p)
        calls[n, B, "fused"] = lambda prepared=prepared: fast.run(prepared, scale=1.0)
    with torch.no_grad():
        best = fastest(calls, device, ROUNDS)
    return [
        {
            "n": n,
            "B": B,
            "scores_mib": B * n * n * 4 / 2**20,
            "batched_ms": round(best[n, B, "batched"] * 1e3, 4),
            "fused_ms": round(best[n, B, "fused"] * 1e3, 4),
        }
        for n, B in SCALING
    ]


def precision(device: torch.device, n: int = 512, B: int = 8) -> list[dict]:
    Q, H, mask = inputs(n, B, device)
    exact = fast.scaled_dot_product_attention(Q.double(), H.double(), H.double(), mask, scale=1.0)
    dtypes = (torch.float32, torch.bfloat16, torch.float16)
    prepared = {t: fast.prepare(Q.to(t), H.to(t), H.to(t), mask) for t in dtypes}
    with torch.no_grad():
        best = fastest({t: lambda p=p: fast.run(p, scale=1.0) for t, p in prepared.items()}, device, ROUNDS)
        errors = {
            t: (fast.run(p, scale=1.0).double() - exact).abs().max().item() for t, p in prepared.items()
        }
    return [
        {
            "dtype": str(t).removeprefix("torch."),
            "n": n,
            "B": B,
            "ms": round(best[t] * 1e3, 4),
            "error": errors[t],
        }
        for t in prepared
    ]


def additive_backward(device: torch.device, B=32, T=50, S=50, d=256, A=256) -> dict:
    Q = torch.randn(B, T, d, device=device, requires_grad=True)  # (B, T, d)
    H = torch.randn(B, S, d, device=device, requires_grad=True)  # (B, S, d)
    score = layers.AdditiveScore(d, d, A).to(device)
    mask = lengths_to_mask(torch.randint(S // 2, S + 1, (B,), device=device), S)
    parameters = [Q, H, *score.parameters()]
    paths = {
        "attend": lambda: attend(scores.additive(Q, H, score.W_q, score.W_k, score.v), H, mask)[0],
        "chunked_additive": lambda: additive_attend(Q, H, H, score.W_q, score.W_k, score.v, mask)[0],
    }
    calls = {
        name: lambda fn=fn: torch.autograd.grad(fn().square().sum(), parameters) for name, fn in paths.items()
    }
    best = fastest(calls, device, ROUNDS)
    return {"B": B, "T": T, "S": S, "d": d, "A": A, **{f"{k}_ms": round(v * 1e3, 3) for k, v in best.items()}}


def main() -> None:
    device = torch.device(DEVICE)
    torch.manual_seed(0)
    machine = describe(device)
    table = {
        "scaling": scaling(device),
        "precision": precision(device),
        "additive_backward": additive_backward(device),
    }
    machine["load_average_1min_after"] = describe(device).get("load_average_1min")
    out = ROOT / f"attnlib/results/ch07_benchmark_{device.type}.json"
    data = {
        "name": out.stem,
        "description": "chapter 7: batched vs fused attention by size; 16-bit floats; additive backward",
        "recipe": "benchmarks/matrix_form.py",
        "environment": machine,
        "table": table,
    }
    out.write_text(json.dumps(data, indent=1) + "\n")
    for row in table["scaling"]:
        print(row)
    print(table["precision"], table["additive_backward"], f"wrote {out}", sep="\n")


if __name__ == "__main__":
    main()

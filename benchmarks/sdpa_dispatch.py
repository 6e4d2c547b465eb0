"""Which kernel PyTorch's SDPA runs on the CPU, recorded per torch version for chapter 7.

Run with each torch the chapter should describe (the course's pinned one, and the learner's):

    .venv/bin/python benchmarks/sdpa_dispatch.py            # torch 2.13.0, the book's
    /path/to/other/venv/bin/python benchmarks/sdpa_dispatch.py

Each run adds (or replaces) the entry of its torch version in ``attnlib/results/ch07_sdpa_dispatch.json``:
the ATen operations that one call runs for the inputs of chapter 7's section "Which kernel runs, and why"
(3-D and 4-D inputs, with and without a bool mask, and ``attnlib.fast.run`` with a prepared mask), and
whether forcing the fused CPU kernel on 3-D inputs raises. Chapter 7 runs the same calls live, checks that
what the learner's torch does matches the entry of its version, and quotes the entries of both versions.
What is recorded is what PyTorch does, not a time: it does not depend on the machine's load.
"""

from __future__ import annotations

import json
import platform
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from attnlib import fast, lengths_to_mask  # noqa: E402

OUT = ROOT / "attnlib/results/ch07_sdpa_dispatch.json"
B, N, D = 8, 64, 64  # the sizes of the chapter's cell


class _Names(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(func.__name__.split(".")[0])
        return func(*args, **(kwargs or {}))


def operations(fn) -> list[str]:
    with torch.no_grad(), _Names() as names:
        fn()
    return names.names


def record() -> dict:
    torch.manual_seed(0)
    Q, H = torch.randn(B, N, D), torch.randn(B, N, D)  # (B, T, d), (B, S, d)
    mask = lengths_to_mask(torch.randint(N // 2, N + 1, (B,)), N)  # (B, S)
    Q4, H4, mask4 = Q[:, None], H[:, None], mask[:, None, None, :]
    prepared = fast.prepare(Q, H, H, mask)
    calls = {
        "3-D, no mask": lambda: F.scaled_dot_product_attention(Q, H, H),
        "4-D, no mask": lambda: F.scaled_dot_product_attention(Q4, H4, H4),
        "4-D, bool mask": lambda: F.scaled_dot_product_attention(Q4, H4, H4, attn_mask=mask4),
        "fast.run, prepared": lambda: fast.run(prepared, scale=1.0),
    }
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            F.scaled_dot_product_attention(Q, H, H)
            refusal = None
        except RuntimeError as error:
            refusal = str(error).strip()
    return {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "shape": {"B": B, "T=S": N, "d": D},
        "operations": {name: operations(call) for name, call in calls.items()},
        "forced_fused_on_3d": {
            "refusal": refusal,
            "warnings": [str(w.message).split(" (Triggered")[0] for w in caught],
        },
    }


def main() -> None:
    entry = record()
    table = json.loads(OUT.read_text())["table"] if OUT.exists() else {}
    table[entry["torch"]] = entry
    data = {
        "name": OUT.stem,
        "description": "chapter 7: the ATen operations SDPA runs on the CPU, per torch version",
        "recipe": "benchmarks/sdpa_dispatch.py",
        "environment": {"torch": sorted(table)},
        "table": dict(sorted(table.items())),
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{entry['torch']}: 3-D inputs run {entry['operations']['3-D, no mask']}; wrote {OUT}")


if __name__ == "__main__":
    main()

"""What a busy machine costs a training run, with one torch thread per process (the pin) and with two.

    .venv/bin/python benchmarks/load.py [--steps=60] [--neighbours=2]

Trains chapter 4's dates model (Bahdanau attention) for 60 steps, alone and beside CPU-bound neighbour
processes (two by default: a busy 2-core machine), with torch's thread count at 1 and at 2. Prints
`name: value` lines: the seconds, the slowdown under load, and that slowdown divided by the fair one.

The fair slowdown: a process with k threads beside n busy neighbours on C cores is owed k*C/(k+n) cores;
alone it uses min(k, C), so fair = min(k, C) / (k*C/(k+n)) (1.5 for k=1, n=2, C=2). A ratio near 1 means
the process loses only what sharing must cost; well above 1 means its threads waste the cores they get
(OpenMP threads spin while waiting for each other, and a descheduled thread stalls the rest).
Run it on an otherwise quiet machine.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import numeric_env  # noqa: E402

numeric_env.apply()  # before torch is imported: it reads these variables when it loads

import torch  # noqa: E402

from attnlib.data import dates_task, make_batches  # noqa: E402
from attnlib.seq2seq import build_model  # noqa: E402
from attnlib.train import train  # noqa: E402


def busy() -> None:
    while True:
        pass


def train_seconds(steps: int, threads: int) -> float:
    torch.set_num_threads(threads)
    task = dates_task(n_train=2000, n_valid=100, n_test=100, seed=0)
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 64, shuffle=True, seed=0, bucket=True)
    torch.manual_seed(0)
    model = build_model("bahdanau", task.src_vocab, task.tgt_vocab, emb=32, hidden=64, attn=64)
    start = time.perf_counter()
    train(model, batches, steps=steps, lr=1e-2, seed=0, progress=False)
    return time.perf_counter() - start


def main(argv: list[str]) -> None:
    options = dict(a.removeprefix("--").split("=") for a in argv)
    steps, neighbours = int(options.get("steps", 60)), int(options.get("neighbours", 2))
    cores = os.cpu_count() or 1
    print(f"load_average_1min: {os.getloadavg()[0]:.2f}")
    print(f"cores: {cores}")
    print(f"neighbours: {neighbours}")
    train_seconds(5, 1)  # warm-up: imports, first allocations
    for threads in (1, 2):
        quiet = train_seconds(steps, threads)
        others = [multiprocessing.Process(target=busy, daemon=True) for _ in range(neighbours)]
        for p in others:
            p.start()
        try:
            loaded = train_seconds(steps, threads)
        finally:
            for p in others:
                p.kill()
                p.join()
        fair = min(threads, cores) / (threads * cores / (threads + neighbours))
        print(f"threads_{threads}_quiet_seconds: {quiet:.2f}")
        print(f"threads_{threads}_loaded_seconds: {loaded:.2f}")
        print(f"threads_{threads}_slowdown: {loaded / quiet:.2f}")
        print(f"threads_{threads}_fair_slowdown: {fair:.2f}")
        print(f"threads_{threads}_slowdown_over_fair: {loaded / quiet / fair:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])

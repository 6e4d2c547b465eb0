"""What chapter 8's real-data cell costs: its model trained on pairs shaped like Tatoeba's, timed here and
stored as package data that the chapter reads (attnlib/results/ch08_real_data_cost.json), with the machine.

    .venv/bin/python benchmarks/real_data_cost.py

The book is built offline, so the real pairs are not here. The cost of a training step depends on the batch,
the sentence lengths and, through the output layer and its softmax, on the size of the Spanish vocabulary,
which the learner's download decides (the cell prints it). So the chapter's translator (Luong, general score,
input feeding, 64 units) is timed on random sentences of 3-8 English and 4-10 Spanish tokens, the lengths of
Tatoeba's first pairs (the file is sorted from short to long), for Spanish vocabularies of 2,000 to 12,000
words (English: half as many), one thread, under the course's numeric environment. Printed: seconds per step
and the extrapolated minutes of the cell's budget (training steps plus greedy decoding of the held-out pairs).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT))

import numeric_env  # noqa: E402

numeric_env.apply()

import torch  # noqa: E402
from timing import describe  # noqa: E402

from attnlib.data import Pair, Vocab, make_batches  # noqa: E402
from attnlib.seq2seq import build_model, decode_batches  # noqa: E402
from attnlib.train import train  # noqa: E402

SPANISH_WORDS = (2_000, 5_000, 12_000)
TIMED_STEPS, HELD_OUT = 60, 1_000
CELL_STEPS = 1_500  # what chapter 8's real-data cell trains for (REAL_STEPS there; a test checks they agree)


def pairs(n: int, english: list[str], spanish: list[str], rng: random.Random) -> list[Pair]:
    return [
        Pair(src=rng.choices(english, k=rng.randint(3, 8)), tgt=rng.choices(spanish, k=rng.randint(4, 10)))
        for _ in range(n)
    ]


def measure(n_spanish: int) -> dict:
    rng = random.Random(0)
    english = [f"e{i}" for i in range(n_spanish // 2)]
    spanish = [f"s{i}" for i in range(n_spanish)]
    src_vocab, tgt_vocab = Vocab(english), Vocab(spanish)
    some = pairs(64 * 20, english, spanish, rng)
    train_batches = make_batches(some, src_vocab, tgt_vocab, 64, shuffle=True)
    held_out = make_batches(pairs(HELD_OUT, english, spanish, rng), src_vocab, tgt_vocab, 500)
    torch.manual_seed(0)
    model = build_model("luong", src_vocab, tgt_vocab, emb=64, hidden=64, score="general", input_feed=True)
    train(model, train_batches, steps=5, lr=5e-3, seed=0, progress=False)  # warm-up: first calls are slow
    start = time.perf_counter()
    train(model, train_batches, steps=TIMED_STEPS, lr=5e-3, seed=0, progress=False)
    per_step = (time.perf_counter() - start) / TIMED_STEPS
    start = time.perf_counter()
    decode_batches(model, held_out)
    decoding = time.perf_counter() - start
    return {
        "spanish_words": n_spanish,
        "seconds_per_step": round(per_step, 4),
        "decoding_seconds": round(decoding, 2),
        "cell_minutes": round((CELL_STEPS * per_step + decoding) / 60, 2),
    }


def main() -> None:
    machine = describe(torch.device("cpu"))
    table = [measure(n) for n in SPANISH_WORDS]
    machine["load_average_1min_after"] = describe(torch.device("cpu")).get("load_average_1min")
    out = ROOT / "attnlib/results/ch08_real_data_cost.json"
    data = {
        "name": out.stem,
        "description": "chapter 8: the real-data cell's cost, timed on random pairs shaped like Tatoeba's",
        "recipe": "benchmarks/real_data_cost.py",
        "environment": machine,
        "cell_steps": CELL_STEPS,
        "held_out_pairs": HELD_OUT,
        "table": table,
    }
    out.write_text(json.dumps(data, indent=1) + "\n")
    for row in table:
        print(row)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

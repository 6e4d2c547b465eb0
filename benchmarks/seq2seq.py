"""Seq2seq benchmarks of the course: how well the tiny models learn on a 2-core CPU in seconds.

Run:  .venv/bin/python benchmarks/seq2seq.py [dates] [translation] [reverse] [speed] [--threads=2]

Runs under the course's numeric environment (tools/numeric_env.py: AVX2 kernels, one thread unless
--threads says otherwise).

Prints one ``name: value`` line per figure. Targets (checked at the end, ``target_*: PASS/FAIL``):
  dates, Bahdanau, <= 20 s training       exact match >= 0.99 on 1,000 held-out dates (greedy decoding)
  toy translation, Luong global, <= 60 s  test BLEU >= 90 (greedy), mean AER <= 0.2 (argmax of weights)
  reverse, lengths 5-60, <= 120 s         Luong (vectorised) >= 0.95 exact match in every length bucket;
                                          no attention < 0.5 in the longest bucket with the same budget
  Luong vectorised vs per-step loop       speed ratio of a training step (forward + backward)
Held-out data only; exact match and BLEU come from real greedy decoding, never from teacher forcing. The
budgets are wall-clock, so the figures depend on how busy the machine is (load average printed first).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import numeric_env  # noqa: E402

numeric_env.apply()  # before torch is imported: it reads these variables when it loads

import torch  # noqa: E402

from attnlib import metrics  # noqa: E402
from attnlib.data import dates_task, make_batches, sequence_task, translation_task  # noqa: E402
from attnlib.seq2seq import build_model  # noqa: E402
from attnlib.seq2seq.decoding import decode_batches  # noqa: E402
from attnlib.train import loss_fn, train  # noqa: E402

RESULTS: dict[str, float] = {}


def report(name: str, value: float) -> None:
    RESULTS[name] = value
    print(f"{name}: {value:.4f}" if isinstance(value, float) else f"{name}: {value}", flush=True)


def refs_of(batches, vocab) -> list[list[int]]:
    return [vocab.encode(p.tgt) for b in batches for p in b.examples]


def run_dates(seconds: float = 20.0) -> None:
    task = dates_task(n_train=8000, n_valid=1000, n_test=1000, seed=0)
    train_b = make_batches(task.train, task.src_vocab, task.tgt_vocab, 64, shuffle=True, seed=0, bucket=True)
    test_b = make_batches(task.test, task.src_vocab, task.tgt_vocab, 500)
    torch.manual_seed(0)
    model = build_model("bahdanau", task.src_vocab, task.tgt_vocab, emb=32, hidden=64, attn=64)
    hist = train(model, train_b, seconds=seconds, lr=1e-2, seed=0, progress=False)
    out = decode_batches(model, test_b)
    report("dates_bahdanau_train_seconds", hist.time[-1])
    report("dates_bahdanau_train_steps", hist.step[-1])
    report("dates_bahdanau_test_sentences", len(out.tokens))
    report("dates_bahdanau_exact_match", metrics.exact_match(out.tokens, refs_of(test_b, task.tgt_vocab)))


def run_translation(seconds: float = 60.0) -> None:
    task = translation_task(seed=0)
    train_b = make_batches(task.train, task.src_vocab, task.tgt_vocab, 64, shuffle=True, seed=0, bucket=True)
    valid_b = make_batches(task.valid, task.src_vocab, task.tgt_vocab, 500)
    test_b = make_batches(task.test, task.src_vocab, task.tgt_vocab, 500)
    torch.manual_seed(0)
    # Input feeding (Luong §3.3) tells each step where the previous one looked: AER 0.25 -> 0.07 in tuning.
    model = build_model(
        "luong", task.src_vocab, task.tgt_vocab, emb=64, hidden=128, score="general", input_feed=True
    )

    def valid_alignment(m) -> float:
        """1 - corpus AER on the VALIDATION set: train() keeps the checkpoint where it is highest."""
        return 1.0 - metrics.aer(*metrics.model_alignments(m, valid_b))

    # The argmax alignment wanders while BLEU stays near 100: stopped after 800, 1100 or 1400 steps the test
    # AER was 0.18, 0.08 or 0.21, so a fixed time budget (which buys a different number of steps on a busy
    # machine) made the AER a lottery. Choosing the checkpoint on the validation set, as one would choose
    # any model, makes it a measurement; the test set is read once, below.
    hist = train(
        model,
        train_b,
        seconds=seconds,
        lr=5e-3,
        seed=0,
        progress=False,
        metric=valid_alignment,
        eval_every=200,
        restore_best=True,
    )
    out = decode_batches(model, test_b)
    hyps = [task.tgt_vocab.decode(t) for t in out.tokens]
    refs = [p.tgt for b in test_b for p in b.examples]
    predicted, gold = metrics.model_alignments(model, test_b)  # teacher-forced argmax links, gold links
    report("translation_luong_train_seconds", hist.time[-1])
    report("translation_luong_train_steps", hist.step[-1])
    report("translation_luong_best_valid_step", hist.best_step)
    report("translation_luong_test_sentences", len(hyps))
    report("translation_luong_test_bleu", metrics.bleu(hyps, refs))
    report("translation_luong_test_exact_match", metrics.exact_match(hyps, refs))
    report(
        "translation_luong_aer_mean",
        statistics.mean(metrics.aer(a, s) for a, s in zip(predicted, gold, strict=True)),
    )
    report("translation_luong_aer_corpus", metrics.aer(predicted, gold))


BUCKETS = ((5, 18), (19, 32), (33, 46), (47, 60))


def run_reverse(seconds: float = 120.0) -> None:
    task = sequence_task("reverse", n=24_000, min_len=5, max_len=60, seed=0)
    train_b = make_batches(task.train, task.src_vocab, task.tgt_vocab, 64, shuffle=True, seed=0, bucket=True)
    for kind, cfg in (("luong", dict(score="general")), ("plain", {})):
        torch.manual_seed(0)
        model = build_model(kind, task.src_vocab, task.tgt_vocab, emb=32, hidden=128, **cfg)
        hist = train(model, train_b, seconds=seconds, lr=5e-3, schedule="cosine", seed=0, progress=False)
        name = "reverse_luong" if kind == "luong" else "reverse_no_attention"
        report(f"{name}_train_seconds", hist.time[-1])
        report(f"{name}_train_steps", hist.step[-1])
        for lo, hi in BUCKETS:
            pairs = [p for p in task.test if lo <= len(p.src) <= hi]
            test_b = make_batches(pairs, task.src_vocab, task.tgt_vocab, 250)
            out = decode_batches(model, test_b)
            report(
                f"{name}_exact_match_len_{lo}_{hi}",
                metrics.exact_match(out.tokens, refs_of(test_b, task.tgt_vocab)),
            )
        report(f"{name}_test_sentences", len(task.test))


def run_speed(repeats: int = 30) -> None:
    """Time one training step (forward + backward) of Luong without input feeding, both ways."""
    task = sequence_task("reverse", n=2000, min_len=30, max_len=30, seed=1)
    batch = make_batches(task.train, task.src_vocab, task.tgt_vocab, 64)[0]
    torch.manual_seed(0)
    model = build_model("luong", task.src_vocab, task.tgt_vocab, emb=32, hidden=128, score="general")
    batch = batch.to(next(model.parameters()).device)

    def step(vectorised: bool) -> float:
        t0 = time.perf_counter()
        logits, _ = model(batch, vectorised=vectorised)
        loss_fn(logits, batch.tgt_out).backward()
        model.zero_grad(set_to_none=True)
        return time.perf_counter() - t0

    for v in (True, False):  # warm up
        step(v)
    fast = statistics.median(step(True) for _ in range(repeats))
    slow = statistics.median(step(False) for _ in range(repeats))
    report("luong_step_ms_vectorised", 1000 * fast)
    report("luong_step_ms_per_step_loop", 1000 * slow)
    report("luong_speed_ratio_per_batch", slow / fast)


def check_targets() -> None:
    checks = {
        "dates": ("dates_bahdanau_exact_match", lambda r: r["dates_bahdanau_exact_match"] >= 0.99),
        "translation_bleu": ("translation_luong_test_bleu", lambda r: r["translation_luong_test_bleu"] >= 90),
        "translation_aer": ("translation_luong_aer_mean", lambda r: r["translation_luong_aer_mean"] <= 0.2),
        "reverse_attention": (
            "reverse_luong_exact_match_len_5_18",
            lambda r: all(r[f"reverse_luong_exact_match_len_{lo}_{hi}"] >= 0.95 for lo, hi in BUCKETS),
        ),
        "reverse_no_attention": (
            "reverse_no_attention_exact_match_len_47_60",
            lambda r: r["reverse_no_attention_exact_match_len_47_60"] < 0.5,
        ),
    }
    for name, (needs, ok) in checks.items():
        if needs in RESULTS:
            print(f"target_{name}: {'PASS' if ok(RESULTS) else 'FAIL'}")


def main(argv: list[str]) -> None:
    # One thread, as pinned: it costs only its fair share when the CPU is shared; --threads=2 is a little
    # faster on a quiet 2-core machine.
    threads = [int(a.split("=")[1]) for a in argv if a.startswith("--threads=")]
    if threads:
        torch.set_num_threads(threads[0])
    which = [a for a in argv if not a.startswith("--")] or ["dates", "translation", "reverse", "speed"]
    report("load_average_1min", os.getloadavg()[0])
    report("torch_threads", torch.get_num_threads())
    runs = {"dates": run_dates, "translation": run_translation, "reverse": run_reverse, "speed": run_speed}
    for name in which:
        runs[name]()
    check_targets()


if __name__ == "__main__":
    main(sys.argv[1:])

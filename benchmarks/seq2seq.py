"""Seq2seq benchmarks of the course: how well the tiny models learn on a 2-core CPU in seconds.

Run:  .venv/bin/python benchmarks/seq2seq.py [dates] [translation] [reverse] [speed] [--threads=2]

Runs under the course's numeric environment (tools/numeric_env.py: AVX2 kernels, one thread unless
--threads says otherwise).

Prints one ``name: value`` line per figure. Targets (checked at the end, ``target_*: PASS/FAIL``):
  dates, Bahdanau, <= 20 s training       exact match >= 0.99 on 1,000 held-out dates (greedy decoding)
  toy translation, Luong global,          on each of 3 seeds: test BLEU >= 90 (greedy), and the corpus AER of
    1,000 steps per seed                  the argmax links below the AER of the diagonal aligner (which reads
                                          no word: target word t of T -> source word t (S-1)/(T-1))
  reverse, lengths 5-60, <= 120 s         Luong (vectorised) >= 0.95 exact match in every length bucket;
                                          no attention < 0.5 in the longest bucket with the same budget
  Luong vectorised vs per-step loop       speed ratio of a training step (forward + backward)
Held-out data only; exact match and BLEU come from real greedy decoding, never from teacher forcing. The
dates and reverse budgets are wall-clock, so their figures depend on how busy the machine is (load average
printed first); the translation budget is a number of steps, the same on every machine (its seconds are
reported), because the AER of one trained model is a property of its seed and its training path, not of the
method: trained for 1,000 steps, seeds 1 and 2 reached test AERs of 0.39 and 0.20, and seed 0, trained for
1,400, wandered between 0.20 and 0.22 along the way (evaluated every 200 steps), so the former target (AER
<= 0.2 after 60 s) passed or failed with the seed and the machine's speed (chapter 8 shows the same spread).
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
from attnlib.seeds import over_seeds  # noqa: E402
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


TRANSLATION_SEEDS = (0, 1, 2)
TRANSLATION_STEPS = 1000


def diagonal_links(pairs) -> list[set]:
    """The aligner that reads no word: gold-linked target word t of T -> source t (S-1) / (T-1), rounded."""
    links = []
    for pair in pairs:
        S, T = len(pair.src), len(pair.tgt)
        words = {t for t, _ in pair.alignment}
        links.append({(t, min(S - 1, round(t * (S - 1) / max(T - 1, 1)))) for t in words})
    return links


def run_translation(steps: int = TRANSLATION_STEPS, seeds: tuple[int, ...] = TRANSLATION_SEEDS) -> None:
    """Luong (general score, input feeding) on the whole toy corpus, a fixed number of steps per seed.

    The budget is a number of steps, not of seconds: under the pinned environment every machine trains the
    same models, and the seconds are reported beside (a time budget made the AER depend on how busy the
    machine was). The argmax alignment settles within the first few hundred steps and differs by seed (chapter
    8: where a row looks when it misses its gold word is the seed's choice), so the targets hold on every seed
    of several, not on one.
    """
    task = translation_task(seed=0)
    train_b = make_batches(task.train, task.src_vocab, task.tgt_vocab, 64, shuffle=True, seed=0, bucket=True)
    test_b = make_batches(task.test, task.src_vocab, task.tgt_vocab, 500)
    refs = [p.tgt for b in test_b for p in b.examples]

    def one_seed(seed: int) -> dict:
        torch.manual_seed(seed)
        model = build_model(
            "luong", task.src_vocab, task.tgt_vocab, emb=64, hidden=128, score="general", input_feed=True
        )
        hist = train(model, train_b, steps=steps, lr=5e-3, seed=seed, progress=False)
        hyps = [task.tgt_vocab.decode(t) for t in decode_batches(model, test_b).tokens]
        predicted, gold = metrics.model_alignments(model, test_b)  # teacher-forced argmax links, gold links
        return {
            "train_seconds": hist.time[-1],
            "test_bleu": metrics.bleu(hyps, refs),
            "test_exact_match": metrics.exact_match(hyps, refs),
            "aer_corpus": metrics.aer(predicted, gold),
            "aer_mean": statistics.mean(metrics.aer(a, s) for a, s in zip(predicted, gold, strict=True)),
        }

    report("translation_luong_train_steps", steps)
    report("translation_luong_test_sentences", len(refs))
    found = dict(zip(seeds, over_seeds(one_seed, list(seeds)), strict=True))
    for seed, row in found.items():
        for name, value in row.items():
            report(f"translation_luong_seed{seed}_{name}", value)
    for name in ("test_bleu", "aer_corpus"):
        values = [row[name] for row in found.values()]
        report(f"translation_luong_{name}_min", min(values))
        report(f"translation_luong_{name}_max", max(values))
    gold_pairs = [p for b in test_b for p in b.examples]
    report(
        "translation_diagonal_aer_corpus",
        metrics.aer(diagonal_links(gold_pairs), [p.alignment for p in gold_pairs]),
    )


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
        "translation_bleu": (
            "translation_luong_test_bleu_min",
            lambda r: r["translation_luong_test_bleu_min"] >= 90,
        ),
        "translation_aer": (
            "translation_luong_aer_corpus_max",
            lambda r: r["translation_luong_aer_corpus_max"] < r["translation_diagonal_aer_corpus"],
        ),
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

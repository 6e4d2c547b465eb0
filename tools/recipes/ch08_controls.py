"""Chapter 8's controls, too slow for the chapter's 90 s: the chapter's translation model as the chapter
trains it, with and without input feeding (the reference point, on these fixed seeds), and
(a) three times longer (1,200 steps instead of 400), with and without input feeding: the budget;
(b) twice as wide (GRUs of 128 instead of 64), with and without input feeding: the model size.

Per variant and seed, on chapter 8's 400 test sentences: exact match of greedy decoding per sentence; per
sentence the number of argmax links that are gold links, reading row t for word t (as the chapter does) and
row t+1 for word t (Luong et al. 2015's footnote 14 for content-based scores: a_t aligns the input word
y_{t-1}); the misses to the left and to the right of the gold words; the mean largest weight; and the
validation exact match every 200 steps (the learning curve). A sentence's AER follows from its hits and the
test set's gold links (one predicted link per gold-linked target word): attnlib.metrics.aer_scores.
"""

from __future__ import annotations

import statistics

import torch

from attnlib.data import make_batches, translation_task
from attnlib.modes import evaluating
from attnlib.seq2seq import build_model, greedy_exact_match
from attnlib.seq2seq.decoding import decode_batches
from attnlib.train import train

DESCRIPTION = (
    "Chapter 8's Luong model (general score) on the toy corpus (translation_task(seed=0, n=4000)), trained "
    "as in the chapter (400 steps, with/without input feeding), 1,200 steps (with/without input feeding) and "
    "400 steps at 128 units (with/without): per test sentence exact match, gold hits of row t and of "
    "row t+1, misses left and right, mean largest weight, validation curve."
)
SEEDS = [0, 1, 2, 3, 4]
VARIANTS = {  # name: (build_model options, steps)
    "input feeding": ({"input_feed": True}, 400),  # the chapter's own two variants, on the stored seeds
    "no input feeding": ({"input_feed": False}, 400),
    "input feeding, 1200 steps": ({"input_feed": True}, 1200),
    "no input feeding, 1200 steps": ({"input_feed": False}, 1200),
    "input feeding, 128 units": ({"input_feed": True, "emb": 64, "hidden": 128}, 400),
    "no input feeding, 128 units": ({"input_feed": False, "emb": 64, "hidden": 128}, 400),
}


@torch.no_grad()
def _links(net, batches) -> dict:
    """Gold hits of rows t and t+1 per sentence (teacher forced); misses left/right; largest weights."""
    hits, hits_next, left, right, largest = [], [], 0, 0, []
    with evaluating(net):
        for batch in batches:
            _, weights = net(batch)  # (B, T + 1, S): the last real row is the <eos> step
            for w, pair in zip(weights, batch.examples, strict=True):
                w = w[: len(pair.tgt) + 1, : len(pair.src)]
                largest += w[: len(pair.tgt)].max(dim=-1).values.tolist()
                words = sorted({t for t, _ in pair.alignment})
                hit = hit_next = 0
                for t in words:
                    gold = {s for u, s in pair.alignment if u == t}
                    best = int(w[t].argmax())
                    hit += best in gold
                    hit_next += int(w[t + 1].argmax()) in gold
                    left += best < min(gold)
                    right += best > max(gold)
                hits.append(hit)
                hits_next.append(hit_next)
    return {
        "hits": hits,
        "hits_next_row": hits_next,
        "misses_left": left,
        "misses_right": right,
        "largest_weight": statistics.mean(largest),
    }


def run(seed: int) -> dict:
    task = translation_task(seed=0, n=4000)
    src, tgt = task.src_vocab, task.tgt_vocab
    train_batches = make_batches(task.train, src, tgt, 64, shuffle=True, seed=0, bucket=True)
    valid_batches = make_batches(task.valid, src, tgt, 500)
    test_batches = make_batches(task.test, src, tgt, 500)
    refs = [pair.tgt for batch in test_batches for pair in batch.examples]
    result = {}
    for name, (options, steps) in VARIANTS.items():
        torch.manual_seed(seed)  # the seed draws the initial weights and the batch order, as in the chapter
        net = build_model(
            "luong", src, tgt, device="cpu", **{"emb": 64, "hidden": 64, "score": "general", **options}
        )
        history = train(
            net,
            train_batches,
            steps=steps,
            lr=5e-3,
            seed=seed,
            progress=False,
            eval_every=200,
            metric=lambda m: greedy_exact_match(m, valid_batches, tgt),
        )
        hyps = [tgt.decode(tokens) for tokens in decode_batches(net, test_batches).tokens]
        result[name] = {
            "exact": [int(h == r) for h, r in zip(hyps, refs, strict=True)],
            **_links(net, test_batches),
            "valid_steps": history.eval_step,
            "valid_exact": history.valid_metric,
        }
    return result

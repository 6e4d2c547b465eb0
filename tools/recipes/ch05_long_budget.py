"""Chapter 5's budget control: the seven Luong variants of the chapter (and the labelled variant local-m with
local-p's Gaussian) trained for STEPS steps instead of the chapter's 150, everything else the same.

The chapter trains 150 steps live and compares how far each variant gets; these runs say where the variants
end when the budget is no longer what limits them (the validation loss has flattened: ``valid_loss`` every 100
steps). Per variant: BLEU and perplexity on the test set, per-sentence exact match (stored as the indices of
the sentences not translated exactly) and per-sentence AER hits (gold links found by the argmax of the
teacher-forced weights, Luong et al. 2015, §5.4), the AER when the weights of step t are read as the alignment
of the word the step reads, y_{t-1} (their footnote 14, for content scores), and the mean row sum of the
weights at the gold-linked words.
"""

import torch

from attnlib import metrics
from attnlib.data import make_batches, translation_task
from attnlib.seq2seq import build_model, decode_batches
from attnlib.train import train

DESCRIPTION = "Chapter 5: the Luong variants of the chapter trained 600 steps (the chapter: 150), test scores"
SEEDS = [0, 1, 2, 3, 4, 5]
STEPS, LR, WINDOW, HIDDEN, EMB, BATCH_SIZE = 600, 1e-2, 2, 32, 32, 64
VARIANTS = {  # label -> (local, score, input feeding), as in the chapter
    "global dot": (None, "dot", False),
    "global general": (None, "general", False),
    "global concat": (None, "concat", False),
    "global location": (None, "location", False),
    "local-m general": ("m", "general", False),
    "local-p general": ("p", "general", False),
    "global general, feeding": (None, "general", True),
    "local-m with Gaussian, general": ("m-gaussian", "general", False),
}


def test_results(model, test_batch) -> dict:
    """Test scores of one trained model (the test set is one batch)."""
    model.eval()
    hyps = [task.tgt_vocab.decode(tokens) for tokens in decode_batches(model, [test_batch]).tokens]
    with torch.no_grad():
        logits, weights = model(test_batch)  # (B, T, V), (B, T + 1, S): teacher forcing
    hits, read_hits, row_sums, wrong = [], [], [], []
    for n, (w, pair, hyp) in enumerate(zip(weights, test_batch.examples, hyps, strict=True)):
        gold, steps = set(pair.alignment), sorted({t for t, _ in pair.alignment})
        best = w[:, : len(pair.src)].argmax(-1).tolist()  # (T + 1,): the strongest source word of each step
        hits.append(sum((t, best[t]) in gold for t in steps))  # step t read as the alignment of y_t
        read_hits.append(
            sum((t, best[t + 1]) in gold for t in steps)
        )  # the step that reads y_t (footnote 14)
        row_sums += [w[t].sum().item() for t in steps]
        if list(hyp) != list(pair.tgt):
            wrong.append(n)
    n_links = sum(len(p.alignment) for p in test_batch.examples)
    n_linked = sum(len({t for t, _ in p.alignment}) for p in test_batch.examples)
    return {
        "BLEU": metrics.bleu(hyps, [p.tgt for p in test_batch.examples]),
        "perplexity": metrics.perplexity(logits, test_batch.tgt_out),
        "not exact": wrong,
        "AER hits": hits,
        "AER": 1 - 2 * sum(hits) / (n_linked + n_links),
        "AER reading y_(t-1)": 1 - 2 * sum(read_hits) / (n_linked + n_links),
        "row sum": sum(row_sums) / len(row_sums),
    }


task = translation_task(seed=0, n=4000)
MAX_SRC = max(len(p.src) for p in task.train + task.valid + task.test)


def run(seed: int) -> dict:
    train_batches = make_batches(
        task.train, task.src_vocab, task.tgt_vocab, BATCH_SIZE, shuffle=True, seed=0, bucket=True
    )
    valid_batches = make_batches(task.valid, task.src_vocab, task.tgt_vocab, 500)
    (test_batch,) = make_batches(task.test, task.src_vocab, task.tgt_vocab, 500)
    out = {}
    for label, (local, score, feed) in VARIANTS.items():
        torch.manual_seed(seed)
        model = build_model(
            "luong",
            task.src_vocab,
            task.tgt_vocab,
            device="cpu",
            emb=EMB,
            hidden=HIDDEN,
            dec_hidden=2 * HIDDEN,
            score=score,
            local=local,
            window=WINDOW,
            input_feed=feed,
            max_src_len=MAX_SRC,
        )
        history = train(
            model, train_batches, valid_batches, steps=STEPS, lr=LR, seed=seed, eval_every=100, progress=False
        )
        out[label] = {**test_results(model, test_batch), "steps": STEPS, "valid_loss": history.valid_loss}
    return out

"""Chapter 9's like-for-like comparison: the encoder-decoder Transformer against chapter 8's RNN + attention.

Both translate chapter 8's toy English-Spanish corpus (``translation_task(seed=0, n=4000)``, its splits and
vocabularies) at two sizes whose parameter counts match to within 1%:

    "chapter 8"  the RNN is chapter 8's model exactly (emb 64, 64 units per direction: 144,970 parameters);
                 the Transformer has d = 48, 4 heads, 2 + 2 blocks, d_ff = 160 (144,554)
    "half"       emb 32, 48 units (76,138) against d = 32, 4 heads, 2 + 2 blocks, d_ff = 128 (76,042)

and everything that is not the architecture is the same: batches of 64 pairs, ``attnlib.train.train`` with
Adam, a budget of ``STEPS`` steps (linear warm-up over ``WARMUP``, then cosine decay), gradients clipped at
norm 1, greedy decoding until <eos>. Each model's learning rate is chosen from ``LEARNING_RATES`` by its mean
validation BLEU over seeds (``chosen_rates``). The chapter trains one seed of each live; the sweep is a
stored result (``tools/recipes/ch09_sweep.py``, read with ``attnlib.stored``), computed by these same
functions.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import cache

import torch

from attnlib import metrics
from attnlib.data import Task, make_batches, translation_task
from attnlib.ranking import TestScores
from attnlib.seq2seq import build_model, decode_batches
from attnlib.train import History, train
from attnlib.transformer import CrossAttentionHead, Seq2SeqTransformer, Seq2SeqTransformerConfig

RNN, TRANSFORMER = "RNN + Luong attention", "Transformer"
KINDS = (RNN, TRANSFORMER)
SIZES = {  # per size, each model's arguments: the RNN's for build_model, the Transformer's for its config
    "half": {
        RNN: {"emb": 32, "hidden": 48},
        TRANSFORMER: {"d_model": 32, "n_heads": 4, "n_layers": 2, "d_ff": 128},
    },
    "chapter 8": {
        RNN: {"emb": 64, "hidden": 64},
        TRANSFORMER: {"d_model": 48, "n_heads": 4, "n_layers": 2, "d_ff": 160},
    },
}
BATCH_SIZE, STEPS, WARMUP = 64, 300, 30
LEARNING_RATES = (2.5e-3, 5e-3, 1e-2, 2e-2, 4e-2)  # factors of 2: the same sweep for every model and size


@dataclass(frozen=True)
class Corpus:
    task: Task
    train: list  # batches of BATCH_SIZE pairs, bucketed by length, reshuffled each epoch by ``train``
    valid: list  # one batch each: decoded whole
    test: list
    max_len: int  # decoding stops here when no <eos> came (a failed run)


@cache
def corpus() -> Corpus:
    """Chapter 8's corpus and splits, batched as chapter 8 batches them (built once per process)."""
    task = translation_task(seed=0, n=4000)
    src, tgt = task.src_vocab, task.tgt_vocab
    return Corpus(
        task,
        make_batches(task.train, src, tgt, BATCH_SIZE, shuffle=True, seed=0, bucket=True),
        make_batches(task.valid, src, tgt, len(task.valid)),
        make_batches(task.test, src, tgt, len(task.test)),
        max(len(p.tgt) for p in task.train) + 5,
    )


def build(kind: str, size: str) -> torch.nn.Module:
    """The RNN with attention (chapter 8's: bidirectional GRU encoder, Luong's general score, input feeding)
    or the encoder-decoder Transformer (post-norm, as Vaswani et al. 2017), at ``size``, on the CPU."""
    if kind not in KINDS or size not in SIZES:
        raise ValueError(f"kind must be one of {KINDS} and size of {tuple(SIZES)}, got {kind!r}, {size!r}")
    task = corpus().task
    if kind == RNN:
        return build_model(
            "luong", task.src_vocab, task.tgt_vocab, device="cpu", score="general", input_feed=True,
            **SIZES[size][RNN],
        )  # fmt: skip
    return Seq2SeqTransformer(
        Seq2SeqTransformerConfig(len(task.src_vocab), len(task.tgt_vocab), **SIZES[size][TRANSFORMER])
    )


def train_run(
    kind: str, size: str, lr: float, seed: int, steps: int = STEPS, warmup: int = WARMUP
) -> tuple[torch.nn.Module, History]:
    """One run: ``seed`` draws the initial weights and the batch order; data, budget and schedule are the
    comparison's (``steps``, ``warmup``: another budget, for a control)."""
    torch.manual_seed(seed)
    model = build(kind, size)
    history = train(model, corpus().train, steps=steps, lr=lr, warmup=warmup, seed=seed, progress=False)
    return model, history


def translations(model: torch.nn.Module, batches: list) -> list[list[str]]:
    """Greedy decoding until <eos> of every sentence of ``batches``, as words."""
    vocab = corpus().task.tgt_vocab
    return [vocab.decode(t) for t in decode_batches(model, batches, max_len=corpus().max_len).tokens]


def bleu_scores(model: torch.nn.Module, batches: list) -> TestScores:
    """BLEU of greedy decoding, per sentence (``float()``: the corpus BLEU)."""
    return metrics.bleu_scores(translations(model, batches), [p.tgt for b in batches for p in b.examples])


def aer_scores(model: torch.nn.Module, batches: list, layer: int = -1, head: int | None = None) -> TestScores:
    """AER of the teacher-forced attention against the gold links, per sentence: the RNN's attention, or one
    cross-attention head of the Transformer (``head=None``: the mean of the layer's heads)."""
    if isinstance(model, Seq2SeqTransformer):
        model = CrossAttentionHead(model, layer, head)
    return metrics.aer_scores(*metrics.model_alignments(model, batches))


def chosen_rates(sweep: dict) -> dict[tuple[str, str], float]:
    """The learning rate of each (kind, size) with the best validation BLEU averaged over the sweep's seeds:
    ``sweep`` as ``attnlib.stored.load("ch09_sweep")``."""
    runs = list(sweep["seeds"].values())
    rates = runs[0]["learning rates"]
    chosen = {}
    for kind in KINDS:
        for size in SIZES:
            bleu = [r["valid BLEU"][f"{kind}, {size}"] for r in runs]  # (seeds, rates)
            means = [statistics.mean(column) for column in zip(*bleu, strict=True)]
            chosen[kind, size] = rates[means.index(max(means))]
    return chosen

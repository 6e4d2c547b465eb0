"""attnlib: the shared library of the course "Attention, from RNNs to Transformers".

Core (functional, one implementation per equation; see the contract in the course repository):
    attnlib.masked_softmax, attend, weighted_sum, lengths_to_mask, device, evaluating (eval mode in a block)
    attnlib.scores    score functions e_{t,s}            attnlib.local    local attention (Luong §3.2)
    attnlib.layers    nn.Modules owning the parameters   attnlib.fast     fused SDPA fast path
    attnlib.chunked   chunked attention, online softmax  attnlib.chunked_additive  additive, recomputed
Models and lessons:
    attnlib.rnn       RNN gradients (chapter 1)          attnlib.data     datasets, vocabularies, batches
    attnlib.seq2seq   encoders, decoders, decoding       attnlib.train    the training loop
    attnlib.metrics   exact match, BLEU, AER, perplexity attnlib.plotting heatmaps and bars
    attnlib.widgets   interactive widgets                attnlib.notebook glue for the book and Colab
    attnlib.probe     linear probes, accuracy per length attnlib.transformer self- and cross-attention, blocks
    attnlib.analysis  reading alignment maps (ch. 8)     attnlib.grading  graded exercises
    attnlib.classifier  the recall classifier (ch. 1)    attnlib.modes    evaluating(model)
    attnlib.explorer  explore(draw, **controls): a widget in a kernel, precomputed frames on the website
    attnlib.pretrained  three of the chapters' trained models, shipped for the exercises (no download)

Plotting, widgets and BLEU import matplotlib, ipywidgets and sacrebleu when first used, not here.
"""

from attnlib import (
    analysis,
    chunked,
    chunked_additive,
    classifier,
    data,
    explorer,
    fast,
    layers,
    local,
    metrics,
    notebook,
    plotting,
    pretrained,
    probe,
    rnn,
    scores,
    seq2seq,
    train,
    transformer,
    widgets,
)
from attnlib.device import device
from attnlib.masking import attend, lengths_to_mask, masked_softmax, weighted_sum
from attnlib.modes import evaluating

__version__ = "0.1.0"

__all__ = [
    "analysis",
    "train",
    "seq2seq",
    "metrics",
    "__version__",
    "attend",
    "chunked",
    "chunked_additive",
    "classifier",
    "data",
    "device",
    "evaluating",
    "explorer",
    "fast",
    "layers",
    "lengths_to_mask",
    "local",
    "masked_softmax",
    "notebook",
    "plotting",
    "pretrained",
    "probe",
    "rnn",
    "scores",
    "transformer",
    "weighted_sum",
    "widgets",
]

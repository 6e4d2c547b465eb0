"""attnlib: the shared library of the course "Attention, from RNNs to Transformers".

Core (functional, one implementation per equation):
    attnlib.masked_softmax, attnlib.attend, attnlib.lengths_to_mask, attnlib.device
    attnlib.scores  score functions e_{t,s}     attnlib.local   local attention (Luong §3.2)
    attnlib.layers  nn.Modules owning parameters attnlib.fast    fused SDPA fast path
"""

from attnlib import data, fast, layers, local, notebook, plotting, rnn, scores, widgets
from attnlib.device import device
from attnlib.masking import attend, lengths_to_mask, masked_softmax

# Course modules beyond the core (data, seq2seq, train, metrics, ...) are imported here by their owners,
# one line each, e.g. `from attnlib import data`.

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "attend",
    "data",
    "device",
    "fast",
    "layers",
    "lengths_to_mask",
    "local",
    "masked_softmax",
    "notebook",
    "plotting",
    "rnn",
    "scores",
    "widgets",
]

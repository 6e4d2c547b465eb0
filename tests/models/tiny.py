"""A tiny task and every model configuration, shared by the model tests."""

from attnlib.data.batching import Pair, collate
from attnlib.data.vocab import Vocab
from attnlib.seq2seq import build_model

PAIRS = [
    Pair(list("abc"), list("cba")),
    Pair(list("abcdef"), list("fedcba")),
    Pair(list("fe"), list("ef")),
]
VOCAB = Vocab(list("abcdef"))

# Every model kind and Luong variant the factory offers, small enough for milliseconds per test.
KINDS = {
    "plain": ("plain", {}),
    "bahdanau": ("bahdanau", {}),
    "bahdanau-lstm-encoder": ("bahdanau", {"cell": "lstm"}),
    "bahdanau-final-bridge": ("bahdanau", {"bridge": "final"}),
    "bahdanau-unidirectional": ("bahdanau", {"bidirectional": False}),
    "luong-dot": ("luong", {"score": "dot"}),
    "luong-scaled-dot": ("luong", {"score": "scaled_dot"}),
    "luong-cosine": ("luong", {"score": "cosine"}),
    "luong-additive": ("luong", {"score": "additive"}),
    "luong-general": ("luong", {"score": "general"}),
    "luong-concat": ("luong", {"score": "concat"}),
    "luong-location": ("luong", {"score": "location", "max_src_len": 8}),
    "luong-local-m": ("luong", {"local": "m", "window": 2}),
    "luong-local-p": ("luong", {"local": "p", "window": 2}),
    "luong-input-feed": ("luong", {"input_feed": True}),
}
ATTENTION = [k for k in KINDS if k != "plain"]
GLOBAL_ATTENTION = [k for k in ATTENTION if "local" not in k]
LUONG_NO_FEED = [k for k in KINDS if k.startswith("luong") and k != "luong-input-feed"]


def tiny_batch():
    return collate(PAIRS, VOCAB, VOCAB)  # S = 6, with padding in rows 0 and 2


def tiny_model(name: str, **extra):
    kind, cfg = KINDS[name]
    return build_model(kind, VOCAB, VOCAB, emb=8, hidden=8, attn=8, device="cpu", **cfg, **extra)

"""Seq2seq models of the course: RNN encoder, three decoders, decoding. Batch-first, on ``attnlib.device()``.

encoder.py   Encoder (bi-GRU/LSTM -> annotations H, bridge -> s_0)
decoders.py  PlainDecoder (no attention, Cho et al. 2014), BahdanauDecoder (Bahdanau et al. 2015)
luong.py     LuongDecoder (dot/general/concat/location, local-m/-p, input feeding; Luong et al. 2015)
config.py    ModelConfig, the one config every module of a model reads (d_h and d_s derived)
model.py     Seq2Seq, build_model
decoding.py  greedy, beam_search (both return attention weights), beam_step (one step of the search)
"""

from attnlib.seq2seq.config import KINDS, ModelConfig
from attnlib.seq2seq.decoders import BahdanauDecoder, ContextGRUCell, PlainDecoder
from attnlib.seq2seq.decoding import (
    Decoded,
    beam_search,
    beam_step,
    decode_batches,
    greedy,
    greedy_exact_match,
)
from attnlib.seq2seq.encoder import Encoder, final_states
from attnlib.seq2seq.luong import LuongConfig, LuongDecoder
from attnlib.seq2seq.model import Seq2Seq, build_model

__all__ = [
    "KINDS",
    "BahdanauDecoder",
    "ContextGRUCell",
    "Decoded",
    "Encoder",
    "LuongConfig",
    "LuongDecoder",
    "ModelConfig",
    "PlainDecoder",
    "Seq2Seq",
    "beam_search",
    "beam_step",
    "build_model",
    "decode_batches",
    "greedy_exact_match",
    "final_states",
    "greedy",
]

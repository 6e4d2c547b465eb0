"""The Transformer of Vaswani et al. 2017, built on attnlib's core (chapter 9 of the course).

tiny.py       self_attention, causal_mask, positional_encoding, MultiHeadSelfAttention; the encoder-only
              TinyTransformer (pre-LN ``Block``, ``TransformerConfig``, ``predict``) for the sequence tasks
attention.py  cross_attention, MultiHeadAttention (queries from one sequence, keys/values from another),
              KVCache (incremental decoding)
blocks.py     EncoderBlock, DecoderBlock (post-norm as in the paper, or norm_first), FeedForward,
              DecoderCache, shifted_causal_mask
model.py      Seq2SeqTransformer (encoder-decoder, §3), its config, TransformerDecoder (KV-cached steps, or
              the prefix recomputed), CrossAttentionHead (one head's weights, for AER)

Every name is importable from ``attnlib.transformer``. The weights come from ``attnlib.scores.scaled_dot``
and ``attnlib.attend``; matrices apply as ``W x`` with shape ``(out, in)`` (the paper's X W^Q is our X W_qᵀ).
"""

from attnlib.masking import attend, lengths_to_mask
from attnlib.transformer.attention import KVCache, MultiHeadAttention, cross_attention
from attnlib.transformer.blocks import (
    DecoderBlock,
    DecoderCache,
    EncoderBlock,
    FeedForward,
    shifted_causal_mask,
)
from attnlib.transformer.model import (
    CrossAttentionHead,
    Seq2SeqTransformer,
    Seq2SeqTransformerConfig,
    TransformerDecoder,
)
from attnlib.transformer.tiny import (
    Block,
    MultiHeadSelfAttention,
    TinyTransformer,
    TransformerConfig,
    causal_mask,
    positional_encoding,
    predict,
    self_attention,
)

__all__ = [
    "Block",
    "CrossAttentionHead",
    "DecoderBlock",
    "DecoderCache",
    "EncoderBlock",
    "FeedForward",
    "KVCache",
    "MultiHeadAttention",
    "MultiHeadSelfAttention",
    "Seq2SeqTransformer",
    "Seq2SeqTransformerConfig",
    "TinyTransformer",
    "TransformerConfig",
    "TransformerDecoder",
    "attend",
    "causal_mask",
    "cross_attention",
    "lengths_to_mask",
    "positional_encoding",
    "predict",
    "self_attention",
    "shifted_causal_mask",
]

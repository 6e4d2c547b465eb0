"""The Transformer of Vaswani et al. 2017, built on attnlib's core (chapter 9 of the course).

attention.py  cross_attention, self_attention (= cross_attention with memory = x), causal_mask,
              MultiHeadAttention (the one multi-head module: self- or cross-attention, a KV cache, fused),
              KVCache (incremental decoding)
positions.py  positional_encoding (the sinusoids of §3.5)
blocks.py     EncoderBlock, DecoderBlock (post-norm as in the paper, or norm_first), FeedForward,
              DecoderCache
model.py      Seq2SeqTransformer (encoder-decoder, §3), its config, TransformerDecoder (KV-cached steps, or
              the prefix recomputed), CrossAttentionHead (one head's weights, for AER)
tiny.py       TinyTransformer, an encoder-only tagger built from pre-norm EncoderBlocks, its config and
              ``predict`` (for the sequence tasks; no other module imports it)

Every name is importable from ``attnlib.transformer``. The weights come from ``attnlib.scores.scaled_dot``
and ``attnlib.attend``; matrices apply as ``W x`` with shape ``(out, in)`` (the paper's X W^Q is our X W_qᵀ).
"""

from attnlib.masking import attend, lengths_to_mask
from attnlib.transformer.attention import (
    KVCache,
    MultiHeadAttention,
    causal_mask,
    cross_attention,
    self_attention,
    shifted_causal_mask,
)
from attnlib.transformer.blocks import DecoderBlock, DecoderCache, EncoderBlock, FeedForward
from attnlib.transformer.model import (
    CrossAttentionHead,
    Seq2SeqTransformer,
    Seq2SeqTransformerConfig,
    TransformerDecoder,
)
from attnlib.transformer.positions import positional_encoding
from attnlib.transformer.tiny import TinyTransformer, TransformerConfig, predict

__all__ = [
    "CrossAttentionHead",
    "DecoderBlock",
    "DecoderCache",
    "EncoderBlock",
    "FeedForward",
    "KVCache",
    "MultiHeadAttention",
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

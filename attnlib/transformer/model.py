"""The encoder-decoder Transformer of Vaswani et al. 2017 (§3, Figure 1), at the course's toy scale.

    memory = Encoder(E_src x + PE)                 N EncoderBlocks over the source
    y      = Decoder(E_tgt y_<t + PE, memory)      N DecoderBlocks: causal self-, then cross-attention
    p(y_t | y_<t, x) = softmax(W_out y_t)

Embeddings are scaled by sqrt(d_model) before the positions are added (§3.4). The model speaks the protocol
of ``attnlib.seq2seq`` (``forward(batch)``, ``start``, ``decoder.step``): ``attnlib.train.train`` trains it,
``attnlib.seq2seq.greedy`` / ``beam_search`` / ``decode_batches`` decode it. A step reuses the keys and
values of the earlier positions (the KV cache), kept in the state as batch-first tensors so that beam search
can reorder them; ``decoder.kv_cache = False`` recomputes the whole prefix at every step instead (the same
numbers, more work: chapter 9 times both). ``attention_maps`` returns every layer's weights per head, and
``CrossAttentionHead`` shows one cross-attention head to ``attnlib.metrics.model_alignments`` (AER per head).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from attnlib.data.vocab import PAD_ID
from attnlib.masking import lengths_to_mask
from attnlib.transformer.blocks import DecoderBlock, DecoderCache, EncoderBlock
from attnlib.transformer.positions import positional_encoding


@dataclass
class Seq2SeqTransformerConfig:
    src_vocab: int
    tgt_vocab: int
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2  # N, in the encoder and in the decoder
    d_ff: int = 128
    max_len: int = 256  # positions of the sinusoid table
    norm_first: bool = False  # post-norm as in the paper; True: pre-norm, with a final LayerNorm


class TransformerDecoder(nn.Module):
    """The decoder stack and the output layer; ``step`` decodes one position with the KV cache."""

    def __init__(self, config: Seq2SeqTransformerConfig):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.tgt_vocab, config.d_model, padding_idx=PAD_ID)
        self.register_buffer("pe", positional_encoding(config.max_len, config.d_model), persistent=False)
        self.blocks = nn.ModuleList(
            DecoderBlock(config.d_model, config.n_heads, config.d_ff, config.norm_first)
            for _ in range(config.n_layers)
        )
        self.norm = nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()
        self.out = nn.Linear(config.d_model, config.tgt_vocab)

    kv_cache: bool = True  # False: every step recomputes the whole prefix (to compare with the cache)

    def run(
        self,
        y_in,
        memory,
        src_mask,
        t0: int = 0,
        caches=None,
        self_weights: list | None = None,
        causal: bool = True,
        positions: bool = True,
    ):
        """Target ids ``(B, T)`` at positions t0 … t0+T-1 -> logits ``(B, T, V)`` and the cross-attention
        weights of every layer, ``[(B, h, T, S)] * N``. A list passed as ``self_weights`` receives the
        causal self-attention weights of every layer, ``(B, h, T, t0 + T)``. ``causal=False`` drops the
        causal mask and ``positions=False`` the positional encoding (what-ifs for a trained model)."""
        T = y_in.shape[1]
        if t0 + T > self.config.max_len:
            raise ValueError(f"target positions up to {t0 + T} but max_len is {self.config.max_len}")
        pe = self.pe[t0 : t0 + T].to(self.embed.weight.dtype)  # (T, d_model)
        y = self.embed(y_in) * math.sqrt(self.config.d_model) + (pe if positions else 0.0)  # (B, T, d_model)
        cross = []
        for i, block in enumerate(self.blocks):
            y, own, weights = block(y, memory, src_mask, None if caches is None else caches[i], causal=causal)
            cross.append(weights)
            if self_weights is not None:
                self_weights.append(own)
        return self.out(self.norm(y)), cross

    def start(self, memory, src_mask) -> dict:
        state = {"memory": memory, "mask": src_mask, "t": 0}
        if not self.kv_cache:  # the ids fed so far (B, t): a tensor, so that beam search reorders it
            state["prefix"] = torch.zeros(memory.shape[0], 0, dtype=torch.long, device=memory.device)
        return state

    def step(self, y_prev: torch.Tensor, state: dict):
        """``y_prev (B,)`` -> logits ``(B, V)``, the last layer's cross-attention weights averaged over heads
        ``(B, S)``, and the new state. The state keeps each layer's keys and values ``(B, h, t, hs)``;
        with ``kv_cache = False`` it keeps the ids instead and runs the decoder over the whole prefix
        y_0 … y_t again (t + 1 positions through every layer, where the cache runs one)."""
        if "prefix" in state:
            prefix = torch.cat([state["prefix"], y_prev[:, None]], dim=1)  # (B, t + 1)
            logits, cross = self.run(prefix, state["memory"], state["mask"])  # (B, t + 1, V): all again
            return logits[:, -1], cross[-1][:, :, -1].mean(dim=1), {**state, "prefix": prefix}
        t, n = state["t"], len(self.blocks)
        caches = [DecoderCache() for _ in range(n)]
        for i, cache in enumerate(caches):  # rebuild the caches from the state's batch-first tensors
            for kind, kv in (("self", cache.self_attn), ("cross", cache.cross_attn)):
                kv.keys, kv.values = state.get(f"{kind}_k{i}"), state.get(f"{kind}_v{i}")
        logits, cross = self.run(y_prev[:, None], state["memory"], state["mask"], t, caches)
        new = {**state, "t": t + 1}
        for i, cache in enumerate(caches):
            for kind, kv in (("self", cache.self_attn), ("cross", cache.cross_attn)):
                new[f"{kind}_k{i}"], new[f"{kind}_v{i}"] = kv.keys, kv.values
        return logits[:, 0], cross[-1][:, :, 0].mean(dim=1), new


class Seq2SeqTransformer(nn.Module):
    """``forward(batch) -> (logits (B, T, V), cross-attention weights [(B, h, T, S)] per layer)``, teacher
    forcing with the causal mask; ``batch`` as ``attnlib.data`` makes it (src, src_lengths, tgt_in)."""

    def __init__(self, config: Seq2SeqTransformerConfig):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.src_vocab, config.d_model, padding_idx=PAD_ID)
        self.register_buffer("pe", positional_encoding(config.max_len, config.d_model), persistent=False)
        self.encoder = nn.ModuleList(
            EncoderBlock(config.d_model, config.n_heads, config.d_ff, config.norm_first)
            for _ in range(config.n_layers)
        )
        self.encoder_norm = nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()
        self.decoder = TransformerDecoder(config)

    def encode(
        self, src: torch.Tensor, src_mask: torch.Tensor, weights: list | None = None, positions: bool = True
    ) -> torch.Tensor:
        """Source ids ``(B, S)``, padding mask ``(B, S)`` -> memory ``(B, S, d_model)``; a list passed as
        ``weights`` receives each layer's self-attention weights ``(B, h, S, S)``; ``positions=False`` leaves
        out the positional encoding."""
        S = src.shape[1]
        if S > self.config.max_len:
            raise ValueError(f"src has {S} positions but max_len is {self.config.max_len}")
        pe = self.pe[:S].to(self.embed.weight.dtype) if positions else 0.0  # (S, d_model)
        x = self.embed(src) * math.sqrt(self.config.d_model) + pe
        for block in self.encoder:
            x, w = block(x, src_mask)
            if weights is not None:
                weights.append(w)
        return self.encoder_norm(x)

    def start(self, src: torch.Tensor, src_lengths: torch.Tensor, src_mask: torch.Tensor | None = None):
        """Encode and return the decoder's initial state, for ``attnlib.seq2seq.greedy`` / ``beam_search``."""
        if src_mask is None:
            src_mask = lengths_to_mask(src_lengths.to(src.device), src.shape[1])
        return self.decoder.start(self.encode(src, src_mask), src_mask)

    def forward(self, batch) -> tuple[torch.Tensor, list[torch.Tensor]]:
        memory = self.encode(batch.src, batch.src_mask)  # (B, S, d_model)
        return self.decoder.run(batch.tgt_in, memory, batch.src_mask)  # (B, T, V), [(B, h, T, S)]

    @torch.no_grad()
    def attention_maps(
        self, batch, causal: bool = True, positions: bool = True
    ) -> dict[str, list[torch.Tensor]]:
        """Every attention weight of a teacher-forced pass, per layer and head: ``"encoder"``
        ``[(B, h, S, S)]``, ``"decoder"`` (causal self-attention) ``[(B, h, T, T)]``, ``"cross"``
        ``[(B, h, T, S)]``. ``causal=False`` lets the decoder see the whole target, ``positions=False`` leaves
        out the positional encodings: what the trained weights do then."""
        encoder, decoder = [], []
        memory = self.encode(batch.src, batch.src_mask, encoder, positions=positions)
        _, cross = self.decoder.run(
            batch.tgt_in, memory, batch.src_mask, self_weights=decoder, causal=causal, positions=positions
        )
        return {"encoder": encoder, "decoder": decoder, "cross": cross}


class CrossAttentionHead(nn.Module):
    """A ``Seq2SeqTransformer`` seen as the course's RNN models are: ``forward(batch) -> (logits (B, T, V),
    weights (B, T, S))``, the weights of one layer's cross-attention, one head or (``head=None``) the mean
    of the heads. So ``attnlib.metrics.model_alignments`` scores each head's alignment (its AER)."""

    def __init__(self, model: Seq2SeqTransformer, layer: int = -1, head: int | None = None):
        super().__init__()
        self.model, self.layer, self.head = model, layer, head

    def forward(self, batch) -> tuple[torch.Tensor, torch.Tensor]:
        logits, cross = self.model(batch)  # (B, T, V), [(B, h, T, S)] per layer
        weights = cross[self.layer]  # (B, h, T, S)
        return logits, weights.mean(dim=1) if self.head is None else weights[:, self.head]

"""Cross-attention against a per-element loop, and the KV cache against recomputing the whole prefix."""

import math

import pytest
import torch

from attnlib.transformer import (
    DecoderBlock,
    DecoderCache,
    KVCache,
    MultiHeadAttention,
    causal_mask,
    cross_attention,
    shifted_causal_mask,
)

B, T, S, D, HEADS, D_FF = 2, 6, 5, 8, 2, 16
EXACT = {"rtol": 0.0, "atol": 1e-12}


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64)


def test_cross_attention_equals_a_per_element_loop():
    y, memory = randn(T, D), randn(S, D)
    W_q, W_k, W_v = randn(4, D), randn(4, D), randn(3, D)
    context, weights = cross_attention(y, memory, W_q, W_k, W_v)
    for t in range(T):
        e = torch.stack([(W_q @ y[t]) @ (W_k @ memory[s]) / math.sqrt(4) for s in range(S)])
        alpha = torch.exp(e - e.max()) / torch.exp(e - e.max()).sum()
        torch.testing.assert_close(weights[t], alpha)
        torch.testing.assert_close(context[t], sum(alpha[s] * (W_v @ memory[s]) for s in range(S)))


def test_cross_attention_padding_mask_gives_padded_sources_zero_weight_and_empty_rows_zero_context():
    y, memory = randn(B, T, D), randn(B, S, D)
    mask = torch.tensor([[True, True, False, False, False], [False] * S])  # (B, S): example 1 is empty
    context, weights = cross_attention(y, memory, randn(4, D), randn(4, D), randn(3, D), mask)
    assert torch.all(weights[0, :, 2:] == 0) and torch.allclose(weights[0].sum(-1), torch.ones(T, 1).double())
    assert torch.equal(context[1], torch.zeros(T, 3, dtype=torch.float64))


def test_multi_head_attention_head_i_is_cross_attention_with_rows_of_the_weights():
    mha = MultiHeadAttention(D, HEADS).double()
    y, memory = randn(B, T, D), randn(B, S, D)
    out, weights = mha(y, memory)
    hs, heads = D // HEADS, []
    for i in range(HEADS):
        rows = slice(i * hs, (i + 1) * hs)
        c, w = cross_attention(y, memory, mha.W_q.weight[rows], mha.W_k.weight[rows], mha.W_v.weight[rows])
        torch.testing.assert_close(weights[:, i], w)
        heads.append(c)
    torch.testing.assert_close(out, torch.cat(heads, dim=-1) @ mha.W_o.weight.T)


def test_shifted_causal_mask_is_the_last_rows_of_the_causal_mask():
    assert torch.equal(shifted_causal_mask(4, 0), causal_mask(4))
    assert torch.equal(shifted_causal_mask(2, 3), causal_mask(5)[3:])


@pytest.mark.parametrize("fused", [False, True], ids=["reference", "fused"])
def test_self_attention_with_a_kv_cache_one_step_at_a_time_equals_the_causal_prefix(fused):
    mha = MultiHeadAttention(D, HEADS, bias=True).double()
    x = randn(B, T, D)
    full, _ = mha(x, mask=causal_mask(T), fused=fused)
    cache = KVCache()
    steps = [mha(x[:, t : t + 1], cache=cache, fused=fused)[0] for t in range(T)]  # (B, 1, D) each
    assert len(cache) == T and cache.keys.shape == (B, HEADS, T, D // HEADS)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, **EXACT)


def decode(blocks, y, memory, mask, caches=None):
    for block, cache in zip(blocks, caches or [None] * len(blocks), strict=True):
        y, self_weights, cross_weights = block(y, memory, mask, cache)
    return y, self_weights, cross_weights


@pytest.mark.parametrize("prefill", [1, 3], ids=["token_by_token", "prompt_of_3"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_cached_decoding_through_two_blocks_equals_recomputing_the_prefix(norm_first, prefill):
    blocks = [DecoderBlock(D, HEADS, D_FF, norm_first=norm_first).double() for _ in range(2)]
    y, memory = randn(B, T, D), randn(B, S, D)
    mask = torch.tensor([[True] * S, [True] * 3 + [False] * 2])  # (B, S) source padding
    full, full_self, full_cross = decode(blocks, y, memory, mask)
    caches = [DecoderCache() for _ in blocks]
    outputs = [decode(blocks, y[:, :prefill], memory, mask, caches)[0]]
    for t in range(prefill, T):
        out, self_weights, cross_weights = decode(blocks, y[:, t : t + 1], memory, mask, caches)
        outputs.append(out)
        torch.testing.assert_close(self_weights[:, :, 0], full_self[:, :, t, : t + 1], **EXACT)
        torch.testing.assert_close(cross_weights[:, :, 0], full_cross[:, :, t], **EXACT)
    torch.testing.assert_close(torch.cat(outputs, dim=1), full, **EXACT)
    assert all(len(c.self_attn) == T and len(c.cross_attn) == S for c in caches)


def test_the_cross_attention_cache_projects_the_memory_once():
    block = DecoderBlock(D, HEADS, D_FF).double()
    memory, cache = randn(B, S, D), DecoderCache()
    block(randn(B, 1, D), memory, cache=cache)
    keys = cache.cross_attn.keys
    block(randn(B, 1, D), memory, cache=cache)
    assert cache.cross_attn.keys is keys and len(cache.self_attn) == 2

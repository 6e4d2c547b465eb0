"""attnlib.transformer against independent oracles: loops, per-head calls, torch's fused kernel."""

import ast
import math
from pathlib import Path

import pytest
import torch

import attnlib
from attnlib.data import make_batches, sequence_task
from attnlib.train import train
from attnlib.transformer import (
    EncoderBlock,
    MultiHeadAttention,
    TinyTransformer,
    TransformerConfig,
    causal_mask,
    cross_attention,
    positional_encoding,
    predict,
    self_attention,
)


def _weights(d_model=6, d_k=4, d_v=5, dtype=torch.float64):
    return (
        torch.randn(d_k, d_model, dtype=dtype),
        torch.randn(d_k, d_model, dtype=dtype),
        torch.randn(d_v, d_model, dtype=dtype),
    )


def test_self_attention_equals_a_per_element_loop():
    x = torch.randn(5, 6, dtype=torch.float64)
    W_q, W_k, W_v = _weights()
    context, weights = self_attention(x, W_q, W_k, W_v)
    for t in range(5):
        q = W_q @ x[t]
        e = torch.stack([q @ (W_k @ x[s]) / math.sqrt(4) for s in range(5)])
        alpha = torch.exp(e - e.max()) / torch.exp(e - e.max()).sum()
        c = sum(alpha[s] * (W_v @ x[s]) for s in range(5))
        assert torch.allclose(weights[t], alpha) and torch.allclose(context[t], c)


def test_self_attention_batched_with_padding_mask_equals_each_sequence_alone():
    x = torch.randn(2, 5, 6, dtype=torch.float64)
    W_q, W_k, W_v = _weights()
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])  # (B, S)
    context, weights = self_attention(x, W_q, W_k, W_v, mask)
    alone, _ = self_attention(x[1, :3], W_q, W_k, W_v)  # the short sequence, unpadded
    assert torch.allclose(context[1, :3], alone)
    assert torch.all(weights[1, :, 3:] == 0)


def test_causal_mask_is_lower_triangular():
    m = causal_mask(4)
    assert m.dtype == torch.bool and m.shape == (4, 4)
    assert all(bool(m[t, s]) == (s <= t) for t in range(4) for s in range(4))


def test_causal_mask_makes_output_t_independent_of_later_inputs():
    T = 6
    x = torch.randn(T, 6, dtype=torch.float64, requires_grad=True)
    context, _ = self_attention(x, *_weights(), mask=causal_mask(T))
    for t in range(T):
        (grad,) = torch.autograd.grad(context[t].sum(), x, retain_graph=True)
        assert torch.all(grad[t + 1 :] == 0)
        assert grad[: t + 1].abs().sum() > 0


def test_multi_head_equals_per_head_attention_concatenated():
    mha = MultiHeadAttention(d_model=8, n_heads=2).double()
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    out, weights = mha(x)
    hs = 4
    heads = []
    for i in range(2):
        rows = slice(i * hs, (i + 1) * hs)
        c, w = self_attention(x, mha.W_q.weight[rows], mha.W_k.weight[rows], mha.W_v.weight[rows])
        assert torch.allclose(weights[:, i], w)
        heads.append(c)
    assert torch.allclose(out, torch.cat(heads, dim=-1) @ mha.W_o.weight.T)
    assert weights.shape == (3, 2, 5, 5)


def test_multi_head_fused_path_equals_reference_forward_and_backward():
    mha = MultiHeadAttention(d_model=8, n_heads=2).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64, requires_grad=True)
    mask = causal_mask(5)
    ref, _ = mha(x, mask=mask)
    fused, none = mha(x, mask=mask, fused=True)
    assert none is None and torch.allclose(ref, fused)
    (g_ref,) = torch.autograd.grad(ref.sum(), x)
    (g_fused,) = torch.autograd.grad(mha(x, mask=mask, fused=True)[0].sum(), x)
    assert torch.allclose(g_ref, g_fused)


def test_self_attention_is_permutation_equivariant_without_positions():
    x = torch.randn(7, 6, dtype=torch.float64)
    W = _weights()
    perm = torch.randperm(7)
    assert torch.allclose(self_attention(x[perm], *W)[0], self_attention(x, *W)[0][perm])


def test_positional_encoding_breaks_permutation_equivariance():
    x = torch.randn(7, 6, dtype=torch.float64)
    W = _weights()
    pe = positional_encoding(7, 6).double()
    perm = torch.tensor([1, 0, 2, 3, 4, 5, 6])
    assert not torch.allclose(self_attention(x[perm] + pe, *W)[0], self_attention(x + pe, *W)[0][perm])


def test_positional_encoding_values():
    pe = positional_encoding(50, 8)
    assert pe.shape == (50, 8)
    p, i = 7, 1
    assert math.isclose(pe[p, 2 * i], math.sin(p / 10_000 ** (2 * i / 8)), abs_tol=1e-6)
    assert math.isclose(pe[p, 2 * i + 1], math.cos(p / 10_000 ** (2 * i / 8)), abs_tol=1e-6)
    assert torch.all(pe[0, 0::2] == 0) and torch.all(pe[0, 1::2] == 1)
    assert positional_encoding(4, 5).shape == (4, 5)  # odd d: one more sine than cosine


def test_errors_name_the_argument():
    x = torch.randn(5, 6)
    W_q, W_k, W_v = (w.float() for w in _weights())
    with pytest.raises(ValueError, match="W_k has 3 rows"):
        self_attention(x, W_q, W_k[:3], W_v)
    with pytest.raises(ValueError, match="x has feature size 5 but W_q expects 6"):
        self_attention(x[:, :5], W_q, W_k, W_v)
    with pytest.raises(ValueError, match="divisible by n_heads"):
        MultiHeadAttention(d_model=6, n_heads=4)
    with pytest.raises(ValueError, match="T must be > 0"):
        causal_mask(0)
    with pytest.raises(ValueError, match="does not broadcast"):
        MultiHeadAttention(8, 2)(torch.randn(2, 5, 8), mask=torch.ones(3, 4, dtype=torch.bool))


@pytest.mark.slow  # trains a model
def test_tiny_transformer_logits_line_up_with_targets_and_learn_reverse():
    task = sequence_task("reverse", n=600, min_len=4, max_len=4, seed=0)
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 32, shuffle=True, seed=0)
    config = TransformerConfig(len(task.src_vocab), len(task.tgt_vocab), d_model=32, n_layers=2, d_ff=64)
    model = TinyTransformer(config)
    logits, weights = model(batches[0])
    assert logits.shape == (*batches[0].tgt_out.shape, len(task.tgt_vocab))
    assert len(weights) == 2 and weights[0].shape == (32, 4, 5, 5)
    history = train(model, batches, steps=100, lr=3e-3, seed=0, progress=False)
    assert history.train_loss[-1] < 0.5 * history.train_loss[0]
    hyps = predict(model, batches[0])
    assert len(hyps) == 32 and all(isinstance(t, int) for h in hyps for t in h)


def test_self_attention_is_cross_attention_with_memory_x():
    x = torch.randn(2, 5, 6, dtype=torch.float64)
    W = _weights()
    mask = causal_mask(5)
    for ours, theirs in zip(self_attention(x, *W, mask), cross_attention(x, x, *W, mask), strict=True):
        assert torch.equal(ours, theirs)
    mha = MultiHeadAttention(d_model=8, n_heads=2).double()
    y = torch.randn(3, 4, 8, dtype=torch.float64)
    assert torch.equal(mha(y, mask=causal_mask(4))[0], mha(y, y, mask=causal_mask(4))[0])


def test_self_attention_names_its_own_argument_in_errors():
    with pytest.raises(ValueError, match=r"\bx\b"):
        self_attention(torch.randn(5, 7, dtype=torch.float64), *_weights())  # d_model 7, W_q expects 6


def test_the_tiny_transformer_is_built_from_pre_norm_encoder_blocks():
    model = TinyTransformer(TransformerConfig(10, 10, d_model=8, n_heads=2, n_layers=3, d_ff=16))
    assert len(model.blocks) == 3
    for block in model.blocks:
        assert isinstance(block, EncoderBlock) and block.norm_first
        assert block.self_attn.W_q.bias is None  # the paper's projections, no biases


def test_one_attention_implementation_and_no_module_imports_the_toy_model():
    package = Path(attnlib.__file__).parent
    defined, importers = [], []
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.startswith("MultiHead"):
                defined.append(node.name)
            if isinstance(node, ast.ImportFrom) and node.module == "attnlib.transformer.tiny":
                importers.append(path.relative_to(package).as_posix())
    assert defined == ["MultiHeadAttention"]
    assert importers == ["transformer/__init__.py"]  # re-exported, used by nothing else

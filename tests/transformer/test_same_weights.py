"""minGPT-style oracle tests: attnlib's Transformer pieces and torch's, loaded with the same weights, agree.

torch.nn.MultiheadAttention keeps W_q, W_k, W_v stacked in ``in_proj_weight (3 d_model, d_model)`` (and
``in_proj_bias``), W_o in ``out_proj``; torch's encoder / decoder layers name the feed-forward ``linear1``,
``linear2`` and the LayerNorms ``norm1``, ``norm2``, ``norm3``. Everything in float64 with dropout 0.
torch's masks say True = NOT attend, attnlib's True = attend: the tests flip them.
"""

import pytest
import torch
from torch import nn

from attnlib.transformer import DecoderBlock, EncoderBlock, MultiHeadAttention, causal_mask

B, T, S, D, HEADS, D_FF = 3, 5, 7, 8, 2, 16
TIGHT = {"rtol": 1e-12, "atol": 1e-12}  # float64: only the order of the sums differs


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def copy_attention(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """in_proj_weight = [W_q; W_k; W_v] (rows), in_proj_bias likewise; out_proj = W_o."""
    W_q, W_k, W_v = theirs.in_proj_weight.detach().chunk(3, dim=0)  # 3 x (d_model, d_model)
    b_q, b_k, b_v = theirs.in_proj_bias.detach().chunk(3, dim=0)  # 3 x (d_model,)
    with torch.no_grad():
        for linear, W, b in ((ours.W_q, W_q, b_q), (ours.W_k, W_k, b_k), (ours.W_v, W_v, b_v)):
            linear.weight.copy_(W)
            linear.bias.copy_(b)
        ours.W_o.weight.copy_(theirs.out_proj.weight)
        ours.W_o.bias.copy_(theirs.out_proj.bias)


def copy_block(ours: EncoderBlock | DecoderBlock, theirs: nn.Module) -> None:
    copy_attention(ours.self_attn, theirs.self_attn)
    if isinstance(ours, DecoderBlock):
        copy_attention(ours.cross_attn, theirs.multihead_attn)
    pairs = [("feed_forward.linear1", "linear1"), ("feed_forward.linear2", "linear2")]
    pairs += [(f"norm{i}", f"norm{i}") for i in (1, 2, 3) if hasattr(ours, f"norm{i}")]
    with torch.no_grad():
        for mine, torchs in pairs:
            ours.get_submodule(mine).weight.copy_(theirs.get_submodule(torchs).weight)
            ours.get_submodule(mine).bias.copy_(theirs.get_submodule(torchs).bias)


def scramble(module: nn.Module) -> nn.Module:
    """Random values everywhere (LayerNorm's weights are 1 and biases 0 by default: too easy to match)."""
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0.0, 0.5)
    return module


def padding(lengths: list[int], n: int = S) -> torch.Tensor:
    """(B, n) bool, True = a real token (attnlib's convention)."""
    return torch.arange(n) < torch.tensor(lengths)[:, None]


def assert_all_close(ours: list[torch.Tensor], theirs: list[torch.Tensor]) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        torch.testing.assert_close(a, b, **TIGHT)


def their_gradient(name: str, their_grads: dict[str, torch.Tensor]) -> torch.Tensor:
    """The gradient of torch's parameter that holds our parameter ``name`` (a slice of in_proj for W_q …)."""
    name = name.replace("cross_attn.", "multihead_attn.").replace("feed_forward.", "")
    for i, W in enumerate(("W_q", "W_k", "W_v")):
        if f"{W}." in name:
            stacked = name.replace(f"{W}.weight", "in_proj_weight").replace(f"{W}.bias", "in_proj_bias")
            return their_grads[stacked].chunk(3, dim=0)[i]
    return their_grads[name.replace("W_o.", "out_proj.")]


def assert_same_gradients(out, ours, expected, theirs, inputs) -> None:
    """Gradients along one random direction, for the inputs and for every parameter, match torch's."""
    direction = torch.randn_like(out)
    our_names, our_params = zip(*ours.named_parameters(), strict=True)
    their_names, their_params = zip(*theirs.named_parameters(), strict=True)
    mine = torch.autograd.grad((out * direction).sum(), [*inputs, *our_params])
    their = torch.autograd.grad((expected * direction).sum(), [*inputs, *their_params])
    assert_all_close(list(mine[: len(inputs)]), list(their[: len(inputs)]))
    their_grads = dict(zip(their_names, their[len(inputs) :], strict=True))
    for name, grad in zip(our_names, mine[len(inputs) :], strict=True):
        torch.testing.assert_close(grad, their_gradient(name, their_grads), **TIGHT, msg=name)


@pytest.mark.parametrize("lengths", [None, [7, 4, 1]], ids=["no_mask", "key_padding"])
def test_cross_attention_equals_torch_multihead_attention_with_weights_per_head(lengths):
    theirs = nn.MultiheadAttention(D, HEADS, batch_first=True, dtype=torch.float64)
    scramble(theirs)
    ours = MultiHeadAttention(D, HEADS, bias=True).double()
    copy_attention(ours, theirs)
    query, memory = torch.randn(B, T, D, dtype=torch.float64), torch.randn(B, S, D, dtype=torch.float64)
    mask = None if lengths is None else padding(lengths)
    out, weights = ours(query, memory, mask=mask)
    expected, expected_weights = theirs(
        query,
        memory,
        memory,
        key_padding_mask=None if mask is None else ~mask,
        need_weights=True,
        average_attn_weights=False,
    )
    assert weights.shape == expected_weights.shape == (B, HEADS, T, S)
    torch.testing.assert_close(out, expected, **TIGHT)
    torch.testing.assert_close(weights, expected_weights, **TIGHT)


def test_causal_self_attention_equals_torch_multihead_attention_forward_and_backward():
    theirs = scramble(nn.MultiheadAttention(D, HEADS, batch_first=True, dtype=torch.float64))
    ours = MultiHeadAttention(D, HEADS, bias=True).double()
    copy_attention(ours, theirs)
    x = torch.randn(B, T, D, dtype=torch.float64, requires_grad=True)
    out, weights = ours(x, mask=causal_mask(T))
    expected, expected_weights = theirs(x, x, x, attn_mask=~causal_mask(T), average_attn_weights=False)
    torch.testing.assert_close(out, expected, **TIGHT)
    torch.testing.assert_close(weights, expected_weights, **TIGHT)
    assert_same_gradients(out, ours, expected, theirs, [x])


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
@pytest.mark.parametrize("lengths", [None, [7, 4, 1]], ids=["no_mask", "key_padding"])
def test_encoder_block_equals_torch_transformer_encoder_layer(norm_first, lengths):
    theirs = nn.TransformerEncoderLayer(
        D, HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first, dtype=torch.float64
    )
    ours = EncoderBlock(D, HEADS, D_FF, norm_first=norm_first).double()
    copy_block(ours, scramble(theirs))
    # requires_grad keeps torch on its ordinary path: its inference fast path returns padded rows as zeros
    x = torch.randn(B, S, D, dtype=torch.float64, requires_grad=True)
    mask = None if lengths is None else padding(lengths)
    out, weights = ours(x, mask)
    expected = theirs(x, src_key_padding_mask=None if mask is None else ~mask)
    assert weights.shape == (B, HEADS, S, S)
    torch.testing.assert_close(out, expected, **TIGHT)
    assert_same_gradients(out, ours, expected, theirs, [x])


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
@pytest.mark.parametrize("lengths", [None, [7, 4, 1]], ids=["no_mask", "key_padding"])
def test_decoder_block_equals_torch_transformer_decoder_layer(norm_first, lengths):
    theirs = nn.TransformerDecoderLayer(
        D, HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first, dtype=torch.float64
    )
    ours = DecoderBlock(D, HEADS, D_FF, norm_first=norm_first).double()
    copy_block(ours, scramble(theirs))
    y = torch.randn(B, T, D, dtype=torch.float64, requires_grad=True)
    memory = torch.randn(B, S, D, dtype=torch.float64, requires_grad=True)
    mask = None if lengths is None else padding(lengths)
    out, self_weights, cross_weights = ours(y, memory, memory_mask=mask)
    expected = theirs(
        y,
        memory,
        tgt_mask=~causal_mask(T),
        memory_key_padding_mask=None if mask is None else ~mask,
    )
    assert self_weights.shape == (B, HEADS, T, T) and cross_weights.shape == (B, HEADS, T, S)
    torch.testing.assert_close(out, expected, **TIGHT)
    assert_same_gradients(out, ours, expected, theirs, [y, memory])


def test_decoder_block_output_t_does_not_depend_on_later_target_positions():
    block = DecoderBlock(D, HEADS, D_FF).double()
    y = torch.randn(B, T, D, dtype=torch.float64, requires_grad=True)
    memory = torch.randn(B, S, D, dtype=torch.float64)
    out, _, _ = block(y, memory)
    for t in range(T):
        direction = torch.randn_like(out[:, t])  # not .sum(): a LayerNorm's outputs sum to its bias
        (grad,) = torch.autograd.grad((out[:, t] * direction).sum(), y, retain_graph=True)
        assert torch.all(grad[:, t + 1 :] == 0) and grad[:, : t + 1].abs().sum() > 0

"""Property tests (hypothesis): what must hold for every shape, length and score."""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import attnlib

FAST = settings(max_examples=50, deadline=None, database=None)  # no example files in the repo


@st.composite
def scores_and_lengths(draw):
    B, T, S = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 6))
    lengths = draw(st.lists(st.integers(0, S), min_size=B, max_size=B))
    scale = draw(st.sampled_from([1.0, 10.0, 1e4]))
    seed = draw(st.integers(0, 2**16))
    e = torch.randn(B, T, S, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)) * scale
    return e, torch.tensor(lengths)


@FAST
@given(scores_and_lengths())
def test_weights_sum_to_one_over_attended_positions_and_are_zero_elsewhere(case):
    e, lengths = case
    mask = attnlib.lengths_to_mask(lengths, e.shape[-1])  # (B, S)
    w = attnlib.masked_softmax(e, mask)
    assert torch.all(w[~mask[:, None, :].expand_as(w)] == 0)
    sums = w.sum(-1)  # (B, T)
    has_any = (lengths > 0)[:, None].expand_as(sums)
    torch.testing.assert_close(sums[has_any], torch.ones_like(sums[has_any]))
    assert torch.all(sums[~has_any] == 0)


@FAST
@given(scores_and_lengths(), st.randoms(use_true_random=False))
def test_permuting_keys_and_values_together_leaves_context_unchanged(case, rnd):
    e, lengths = case
    B, T, S = e.shape
    v = torch.randn(B, S, 3, dtype=torch.float64)
    mask = attnlib.lengths_to_mask(lengths, S)
    perm = list(range(S))
    rnd.shuffle(perm)
    context, _ = attnlib.attend(e, v, mask)
    # Permuting the keys permutes the score columns; the mask travels with its positions.
    permuted, _ = attnlib.attend(e[..., perm], v[:, perm], mask[:, perm])
    torch.testing.assert_close(permuted, context)

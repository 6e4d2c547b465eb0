"""Bad input raises ValueError / TypeError with a message naming the argument and the shapes it got."""

import pytest
import torch

import attnlib
from attnlib import chunked, fast, layers, local, scores


def r(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


q, k5, k7, v3 = r(2, 3, 5), r(2, 4, 5), r(2, 4, 7), r(2, 4, 3)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # feature sizes: never broadcast, always named
        (lambda: scores.dot(q, k7), ValueError, r"keys has feature size 7 but query expects 5"),
        (lambda: scores.scaled_dot(q, k7), ValueError, r"keys has feature size 7 .*keys shape \(2, 4, 7\)"),
        (lambda: scores.cosine(q, k7), ValueError, r"keys has feature size 7 but query expects 5"),
        (lambda: scores.general(q, k7, r(5, 8)), ValueError, r"keys has feature size 7 but W expects 8"),
        (lambda: scores.general(q, k7, r(4, 7)), ValueError, r"query has feature size 5 but W expects 4"),
        (lambda: scores.general(q, k7, r(5, 7, 1)), ValueError, r"W must be a matrix \(dq, dk\), got shape"),
        (
            lambda: scores.additive(q, k7, r(6, 5), r(6, 8), r(6)),
            ValueError,
            r"keys has feature size 7 but W_k expects 8 \(keys shape \(2, 4, 7\), W_k shape \(6, 8\)\)",
        ),
        (
            lambda: scores.additive(q, k7, r(6, 4), r(6, 7), r(6)),
            ValueError,
            r"query has feature size 5 but W_q",
        ),
        (
            lambda: scores.additive(q, k7, r(6, 5), r(4, 7), r(6)),
            ValueError,
            r"W_k has 4 rows \(the attention size A\) but W_q has 6",
        ),
        (
            lambda: scores.additive(q, k7, r(6, 5), r(6, 7), r(5)),
            ValueError,
            r"v must have shape \(6,\).*got shape \(5,\)",
        ),
        (lambda: scores.concat(q, k7, r(6, 11), r(6)), ValueError, r"W has input size 11 but .* 5 \+ 7 = 12"),
        (
            lambda: scores.additive_from_projections(r(3, 6), r(4, 5), r(6)),
            ValueError,
            r"keys_proj has feature size 5",
        ),
        (lambda: scores.location(q, r(4, 5), 6), ValueError, r"S is 6 but W has only 4 rows"),
        (lambda: scores.location(q, r(4, 6), 3), ValueError, r"query has feature size 5 but W expects 6"),
        (lambda: scores.cosine(q, k5, torch.ones(3)), ValueError, r"beta must be a number or a 0-dim tensor"),
        (lambda: scores.cosine(q, k5, True), TypeError, r"beta must be a number or a 0-dim tensor, got bool"),
        (
            lambda: scores.additive_from_projections(r(3, 6), r(4, 6), r(6).double()),
            TypeError,
            r"v has dtype torch.float64 but query_proj has dtype torch.float32",
        ),
        (lambda: scores.general(q, k7, r(5, 7).double()), TypeError, r"W has dtype torch.float64 but query"),
        # shapes of query / keys themselves
        (lambda: scores.dot(r(5), k5), ValueError, r"query must have at least 2 dims, got shape \(5,\)"),
        (lambda: scores.dot(r(3, 3, 5), r(2, 4, 5)), ValueError, r"batch dims that do not broadcast"),
        # types
        (lambda: scores.dot([[1.0]], k5), TypeError, r"query must be a torch.Tensor, got list"),
        (
            lambda: scores.dot(q, torch.ones(2, 4, 5, dtype=torch.long)),
            TypeError,
            r"keys must have a floating",
        ),
        (lambda: scores.dot(q, k5.double()), TypeError, r"keys has dtype torch.float64 but query has dtype"),
        (lambda: scores.general(q, k5, "W"), TypeError, r"W must be a torch.Tensor, got str"),
        # masks and values
        (
            lambda: attnlib.masked_softmax(r(2, 3, 4), torch.ones(2, 4)),
            TypeError,
            r"mask must be a bool tensor",
        ),
        (
            lambda: attnlib.masked_softmax(r(2, 3, 4), torch.ones(2, 5, dtype=torch.bool)),
            ValueError,
            r"mask of shape \(2, 5\) does not broadcast to scores of shape \(2, 3, 4\)",
        ),
        (
            lambda: attnlib.masked_softmax(r(3, 4), torch.ones(2, 3, 4, dtype=torch.bool)),
            ValueError,
            r"mask of shape",
        ),
        (
            lambda: attnlib.attend(r(2, 3, 4), r(2, 5, 3)),
            ValueError,
            r"values has 5 positions but scores has 4",
        ),
        (lambda: attnlib.attend(r(2, 3, 4), v3.double()), TypeError, r"values has dtype torch.float64"),
        # lengths
        (
            lambda: attnlib.lengths_to_mask(torch.tensor([2, 5]), 4),
            ValueError,
            r"lengths must be <= S = 4, got \[2, 5\]",
        ),
        (lambda: attnlib.lengths_to_mask(torch.tensor([-1, 2]), 4), ValueError, r"lengths must be >= 0"),
        (
            lambda: attnlib.lengths_to_mask(torch.tensor([1.0]), 4),
            TypeError,
            r"lengths must have an integer dtype",
        ),
        (lambda: attnlib.lengths_to_mask([1, 2], 4), TypeError, r"lengths must be a torch.Tensor"),
        (lambda: attnlib.lengths_to_mask(torch.tensor([1]), -1), ValueError, r"S must be >= 0, got -1"),
        # local attention
        (lambda: local.gaussian(torch.zeros(3), 5, 0), ValueError, r"D must be a finite number > 0.*got 0"),
        (lambda: local.gaussian(torch.zeros(3), 5, -1.5), ValueError, r"D must be a finite number > 0"),
        (lambda: local.gaussian(torch.zeros(3), 5, "2"), TypeError, r"D must be a number"),
        (lambda: local.gaussian(torch.zeros(3), 0, 2), ValueError, r"S must be > 0, got 0"),
        (
            lambda: local.weights(r(2, 3, 4), torch.zeros(2, 4), 2),
            ValueError,
            r"p of shape \(2, 4\) does not broadcast",
        ),
        (
            lambda: local.weights(r(2, 3, 4), torch.arange(3), 2),
            TypeError,
            r"p must have a floating point dtype",
        ),
        (
            lambda: local.weights(r(2, 3, 4), torch.zeros(3), 0.0),
            ValueError,
            r"D must be a finite number > 0",
        ),
        (
            lambda: local.predict_position(q, r(6, 5), r(6), torch.tensor([4, 4, 4])),
            ValueError,
            r"lengths must have shape \(2,\) .*got shape \(3,\)",
        ),
        (
            lambda: local.predict_position(q, r(6, 5), r(6), torch.tensor([4, -2])),
            ValueError,
            r"lengths must be >= 0",
        ),
        (
            lambda: local.predict_position(q, r(6, 4), r(6), 4),
            ValueError,
            r"query has feature size 5 but W_p expects 4",
        ),
        (lambda: local.predict_position(q, r(6, 5), r(7), 4), ValueError, r"v_p must have shape \(6,\)"),
        # fast path
        (
            lambda: fast.scaled_dot_product_attention(q, k7, v3),
            ValueError,
            r"keys has feature size 7 but query",
        ),
        (
            lambda: fast.scaled_dot_product_attention(q, k5, r(2, 6, 3)),
            ValueError,
            r"values has 6 positions but keys",
        ),
        (
            lambda: fast.scaled_dot_product_attention(q, k5, r(3, 4, 3)),
            ValueError,
            r"query, keys and values have batch dims that do not broadcast: .*values shape \(3, 4, 3\)",
        ),
        (
            lambda: fast.scaled_dot_product_attention(r(1, 3, 5), r(2, 4, 5), r(3, 4, 3)),
            ValueError,
            r"query, keys and values have batch dims that do not broadcast",
        ),
        (
            lambda: chunked.chunked_attend(q, k5, r(2, 6, 3), scores.dot),
            ValueError,
            r"values has 6 positions but keys has 4 \(values shape \(2, 6, 3\), keys shape \(2, 4, 5\)\)",
        ),
        (
            lambda: chunked.chunked_attend(q, k5, v3, scores.dot, recompute=1),
            TypeError,
            r"recompute must be a bool",
        ),
        # layers and the factory
        (
            lambda: layers.make_score("luong", 5, 5),
            ValueError,
            r"unknown score name 'luong'; valid names: dot, scaled_dot",
        ),
        (lambda: layers.make_score("dot", 5, 7), ValueError, r"needs query_size == key_size"),
        (lambda: layers.make_score("additive", 5, 7), ValueError, r"'additive' needs attention_size"),
        (lambda: layers.make_score("location", 5, 7), ValueError, r"'location' needs max_source_len"),
        (lambda: layers.GeneralScore(0, 5), ValueError, r"query_size must be > 0, got 0"),
        (lambda: layers.CosineScore(init_beta=0.0), ValueError, r"init_beta must be a finite number > 0"),
        (
            lambda: layers.LocationScore(5, max_source_len=3)(q, k5),
            ValueError,
            r"keys has 4 source positions .* built with max_source_len=3",
        ),
        (
            lambda: layers.AdditiveScore(5, 5, 6)(q, k5, projected_keys=r(2, 9, 6)),
            ValueError,
            r"projected_keys has 9 positions but keys has 4",
        ),
    ],
)
def test_bad_input_raises_a_message_naming_argument_and_shapes(call, error, message):
    with pytest.raises(error, match=message):
        call()

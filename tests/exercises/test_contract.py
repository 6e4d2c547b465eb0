"""checks.contract, the rules every call of a learner's function is held to (in the notebook through
checks.call, in the grader through the sandbox's proxies): each rule fails the function that breaks it and
passes the one that keeps it."""

import pytest
import torch

from attnlib.grading import checks


def pure(x, mask=None):
    return torch.softmax(x if mask is None else x.masked_fill(~mask, -1e9), dim=-1)


def in_place(x, mask=None):
    return torch.softmax(x.masked_fill_(~mask, -1e9) if mask is not None else x, dim=-1)


def test_a_pure_function_keeps_the_contract():
    x, mask = torch.randn(2, 3), torch.tensor([[True, False, True], [True, True, True]])
    assert torch.equal(checks.contract(pure, (x, mask), "pure"), pure(x, mask))
    assert checks.call(pure, x, mask, what="pure(x, mask)") is not None


def test_changing_an_argument_in_place_fails_even_inside_a_list():
    x, mask = torch.randn(2, 3), torch.tensor([[True, False, True], [True, True, True]])
    with pytest.raises(AssertionError, match="argument.s. number 1 in place"):
        checks.contract(in_place, (x, mask), "in_place")

    def scale_all(grads):
        for g in grads:
            g.mul_(0.5)
        return grads

    with pytest.raises(AssertionError, match="in place"):
        checks.call(scale_all, [torch.ones(2), torch.ones(3)], what="scale_all(grads)")


def test_a_result_that_changes_from_call_to_call_fails():
    calls = []

    def stateful(x):
        calls.append(1)
        return x * len(calls)

    with pytest.raises(AssertionError, match="called again with the same inputs"):
        checks.call(stateful, torch.ones(2), what="stateful(x)")
    with pytest.raises(AssertionError, match="called again"):
        checks.call(lambda x: x + torch.rand(()), torch.ones(2), what="noisy(x)")  # unseeded randomness


def test_float32_in_float64_out_fails_and_float64_in_float64_out_passes():
    def doubled(x):
        return x.double() * 2

    with pytest.raises(AssertionError, match="given float32 tensors and returned float64"):
        checks.call(doubled, torch.ones(2), what="doubled(x)")
    assert checks.call(doubled, torch.ones(2, dtype=torch.float64), what="doubled(x)").dtype == torch.float64
    # integer or mixed inputs set no expectation; a tuple's tensors are all checked
    assert checks.call(lambda n: torch.ones(n, dtype=torch.float64), 3, what="f(3)") is not None
    with pytest.raises(AssertionError, match="returned float64"):
        checks.call(lambda x: (x, x.double()), torch.ones(2), what="pair(x)")


def test_a_set_exempts_a_name_from_a_rule():
    def fit(x):
        return x.double()

    checks.CONTRACT_EXEMPT["fit"] = ["dtype"]
    try:
        assert checks.call(fit, torch.ones(2), what="fit(x)").dtype == torch.float64
    finally:
        del checks.CONTRACT_EXEMPT["fit"]
    with pytest.raises(AssertionError, match="returned float64"):
        checks.call(fit, torch.ones(2), what="fit(x)")


def test_nan_results_are_the_same_result():
    assert checks.same_result(
        (torch.tensor([float("nan"), 1.0]), float("nan")), (torch.tensor([float("nan"), 1.0]), float("nan"))
    )
    assert not checks.same_result(torch.tensor([0.0, 1.0]), torch.tensor([0.0, 1.5]))


def test_sets_of_tensors_are_compared_by_value():
    """Set 8's links as 0-d tensors hash by identity: two calls give equal sets that are not =="""
    links = lambda: {(torch.tensor(0), torch.tensor(1))}  # noqa: E731
    assert checks.same_result(links(), links())
    assert not checks.same_result(links(), {(torch.tensor(0), torch.tensor(2))})


def test_responsive_fails_a_function_that_ignores_its_inputs_and_passes_one_with_an_error_of_its_own():
    """checks.responsive asks each input after the first to change the value: a constant (or an argument
    handed back unread) fails; set 8's crossings that lists the pairs in the SAME order, which gives the empty
    set for both later inputs, still computes with its input and passes."""
    inputs = [([(0, 0), (1, 1)],), ([(0, 1), (1, 0)],), ([(0, 2), (1, 1), (2, 0)],)]

    def same_order(links):
        return {(a, b) for a in links for b in links if a[0] < b[0] and a[1] < b[1]}

    assert len(checks.responsive(same_order, inputs, "same_order")) == 3
    with pytest.raises(AssertionError, match="the same value for inputs whose answers differ"):
        checks.responsive(lambda links: set(), inputs, "constant")
    with pytest.raises(AssertionError, match="None or NaN"):
        checks.responsive(lambda links: None, inputs, "none")


def test_order_keeping_ties_keeps_every_argmax_over_the_rows():
    """Set 8's disguise shuffles a map's rows in checks.order_keeping_ties: rows that share a column's largest
    weight (saturated weights) keep their order, so an argmax over the rows, which breaks ties by order, reads
    the same through the shuffle; a plain shuffle of the same map does not (positive control)."""
    import torch

    from attnlib.grading import checks

    w = torch.tensor([[1.0, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0], [0.5, 0, 0.5]])
    tops = w == w.max(0, keepdim=True).values
    g = torch.Generator().manual_seed(0)
    orders = [checks.order_keeping_ties(tops, g) for _ in range(20)]
    assert all(torch.equal(order[w[order].argmax(0)], w.argmax(0)) for order in orders)
    assert len({tuple(order.tolist()) for order in orders}) > 1  # it does shuffle
    plain = [torch.randperm(6, generator=g) for _ in range(20)]
    assert not all(torch.equal(order[w[order].argmax(0)], w.argmax(0)) for order in plain)


MASK = torch.tensor([[True, True, True, False], [True, True, False, False]])


def test_informative_weights_passes_a_masked_softmax_and_a_slip_with_weight_on_padding():
    """Issue 27 item 4: a right map and a slip (no mask: weight on padding, rows still summing to 1) pass."""
    scores = torch.tensor([[0.3, -1.0, 2.0, 0.5], [1.5, 0.2, -0.7, 0.1]])
    checks.informative_weights(torch.softmax(scores.masked_fill(~MASK, -1e9), -1), "right", MASK)
    checks.informative_weights(torch.softmax(scores, -1), "no mask", MASK)


@pytest.mark.parametrize(
    "weights,fails_on",
    [
        (MASK.double() / MASK.sum(-1, keepdim=True), "uniform"),
        (torch.tensor([[1.0, 0, 0, 0], [1.0, 0, 0, 0]]), "one and the same position"),
        (torch.ones(2, 4), "sum to 1"),
    ],
    ids=["uniform", "all_on_one_position", "rows_not_distributions"],
)
def test_informative_weights_fails_a_degenerate_map(weights, fails_on):
    with pytest.raises(AssertionError, match=fails_on):
        checks.informative_weights(weights, "map", MASK)

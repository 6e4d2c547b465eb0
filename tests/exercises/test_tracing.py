"""The checks that look at what a learner's function ran (attnlib.grading.tracing), as specifications.

Each is read off one traced call, in the learner's notebook as here, and in the grader's sandbox through the
same `run_traced` report; the exercise fixtures test them there.
"""

import threading

import pytest
import torch

from attnlib.grading import checks


def project_once(H, U, steps):
    UH = H @ U.T  # U is used once, whatever the number of steps
    return [UH.sum() for _ in range(steps)]


def project_every_step(H, U, steps):
    return [(H @ U.T).sum() for _ in range(steps)]


def project_under_another_name(H, U, steps):
    W = U.clone()  # a copy of U is still U
    return [(H @ W.T).sum() for _ in range(steps)]


def test_uses_of_counts_what_runs_with_an_argument_its_views_and_copies():
    H, U = torch.randn(4, 3), torch.randn(2, 3)
    assert checks.uses_of(project_once, (H, U, 2), 1) == checks.uses_of(project_once, (H, U, 5), 1)
    assert checks.uses_of(project_every_step, (H, U, 2), 1) < checks.uses_of(project_every_step, (H, U, 5), 1)
    assert checks.uses_of(project_under_another_name, (H, U, 2), 1) < checks.uses_of(
        project_under_another_name, (H, U, 5), 1
    )


def test_largest_output_is_the_most_elements_a_call_made_not_the_inputs_nor_views():
    x = torch.randn(1000)

    def small(x):
        return x[:10] * 2  # a view of x (not counted: it is x's memory), then 10 new elements

    def outer(x):
        return (x[:, None] * x[None, :]).sum()  # a 1000 x 1000 tensor, even if only its sum is returned

    def expanded(x):
        return x[None, :].expand(50, 1000).sum(0)  # expand makes no new memory: the sum's 1000 elements

    assert checks.largest_output(small, (x,)) == 10
    assert checks.largest_output(outer, (x,)) == 1000 * 1000
    assert checks.largest_output(expanded, (x,)) == 1000


def test_functions_run_names_what_ran_not_what_the_source_mentions():
    def helper(x):
        return x + 1

    def answer(x, use_helper):
        # helper(x) would be another way
        return helper(x) if use_helper else x * 2

    assert "helper" in checks.functions_run(answer, torch.ones(2), True)
    assert "helper" not in checks.functions_run(answer, torch.ones(2), False)


def test_no_autograd_reads_the_call_not_a_comment():
    def by_hand(x):
        return 2 * x  # no backward() here: the comment does not count

    def by_autograd(x):
        x = x.clone().requires_grad_(True)
        (x**2).sum().backward()
        return x.grad

    assert torch.equal(checks.no_autograd(by_hand, torch.ones(3)), 2 * torch.ones(3))
    with pytest.raises(AssertionError, match="uses autograd"):
        checks.no_autograd(by_autograd, torch.ones(3))


def test_a_failing_function_fails_the_check_with_its_error():
    def broken(x):
        raise ValueError("shapes do not match")

    with pytest.raises(AssertionError, match="broken raised ValueError: shapes do not match"):
        checks.largest_output(broken, (torch.ones(1),))


def test_once_computes_a_shared_value_once_even_from_several_threads():
    calls = []

    def compute():
        calls.append(1)
        return torch.arange(3)

    key = "test_tracing: once"
    results = []
    threads = [threading.Thread(target=lambda: results.append(checks.once(key, compute))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and all(r is results[0] for r in results)

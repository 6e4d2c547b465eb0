"""Tests the learner writes (issue 27): the implementation under test can only be called, and the public
check runs a learner's test in the notebook with attnlib's functions switched off for the test only."""

import inspect

import pytest
import torch

import attnlib
from attnlib.grading import checks, learner_tests


def right(x):
    return attnlib.masked_softmax(x)


def test_calling_the_implementation_under_test_is_not_a_read():
    run = learner_tests.run_here(lambda f: f(torch.zeros(3)), right)
    assert run.passed and run.calls == 1 and run.read == []


def test_reading_the_source_of_the_implementation_under_test_is_recorded():
    run = learner_tests.run_here(lambda f: inspect.getsource(f), right)
    assert not run.passed and run.read
    with pytest.raises(AssertionError, match="reads the implementation under test"):
        checks.run_test(lambda f: inspect.getsource(f), right, "test_x(x)")


def helper(x):
    """The function the next test switches off (one of this module's own, whatever else ran before)."""
    return torch.softmax(x, dim=-1)


def uses_helper(x):
    return helper(x)


def test_the_switched_off_functions_fail_in_the_test_but_not_in_the_implementation(monkeypatch):
    monkeypatch.setattr(checks, "GRADING", False)  # as in a learner's notebook
    off = (f"{__name__}.helper",)
    assert learner_tests.run_here(lambda f: f(torch.zeros(2)), uses_helper, off).passed  # positive control
    with pytest.raises(AssertionError, match="switched off"):
        checks.run_test(lambda f: helper(f(torch.zeros(2))), uses_helper, "test_x(x)", off)
    assert helper(torch.zeros(2)).sum() == 1  # restored afterwards


def test_catches_fails_a_test_that_lets_the_wrong_implementation_pass():
    def wrong(x):
        return torch.softmax(x, dim=0)

    def checks_rows(f):
        assert torch.allclose(f(torch.randn(3, 4)).sum(-1), torch.ones(3))

    checks.catches(checks_rows, right, wrong, "test_x(x)", "a softmax over the wrong axis")
    with pytest.raises(AssertionError, match="lets a softmax over the wrong axis pass"):
        checks.catches(
            lambda f: f(torch.randn(3, 4)), right, wrong, "test_x(x)", "a softmax over the wrong axis"
        )
    with pytest.raises(AssertionError, match="never calls"):
        checks.passes(lambda f: None, right, "test_x(x)")
    with pytest.raises(AssertionError, match="never calls"):
        checks.catches(lambda f: None, right, wrong, "test_x(x)", "a softmax over the wrong axis")


def test_a_hidden_case_does_not_say_which_bug_the_learners_test_let_pass():
    """Which bugs the hidden tests plant stays hidden, from the feedback too: a resubmission could otherwise
    guard against exactly those."""

    def wrong(x):
        return torch.softmax(x, dim=0)

    def lax(f):
        f(torch.randn(3, 4))

    with checks.hidden_case(), pytest.raises(AssertionError) as hidden:
        checks.catches(lax, right, wrong, "test_x(x)", "a softmax over the wrong axis")
    assert "lets one of the hidden bugs pass" in str(hidden.value) and "wrong axis" not in str(hidden.value)
    with pytest.raises(AssertionError, match="wrong axis"):  # the control: a public case names it
        checks.catches(lax, right, wrong, "test_x(x)", "a softmax over the wrong axis")

"""Specification of attnlib.seeds: one run per seed, the same results in one process or several."""

import multiprocessing
import os
import subprocess
import sys

import pytest
import torch

from attnlib.data.algorithmic import sequence_task
from attnlib.data.batching import make_batches
from attnlib.seeds import course_seeds, over_seeds, parallel_workers
from attnlib.seq2seq import build_model
from attnlib.train import train

TASK = sequence_task("copy", n=200, min_len=2, max_len=4, seed=0, vocab_size=4)
BATCHES = make_batches(TASK.train, TASK.src_vocab, TASK.tgt_vocab, 16)


def _trained(seed):
    """A short training run whose weights depend on the seed (initial weights and batch order)."""
    model = build_model("luong", TASK.src_vocab, TASK.tgt_vocab, emb=8, hidden=16, attn=8, device="cpu")
    history = train(model, BATCHES, steps=15, lr=1e-2, seed=seed, progress=False, log_every=5)
    return {"loss": history.train_loss, "weights": model.state_dict()}


def test_each_run_starts_from_its_seed():
    draws = over_seeds(lambda seed: torch.rand(3), [4, 5], workers=1)
    torch.manual_seed(4)
    assert torch.equal(draws[0], torch.rand(3))
    assert not torch.equal(draws[0], draws[1])


@pytest.mark.slow  # trains six models, in forked processes
@pytest.mark.skipif(not hasattr(os, "fork"), reason="separate processes need fork (Linux)")
def test_separate_processes_give_the_same_results_bit_for_bit():
    seeds = [0, 1, 2]
    alone = over_seeds(_trained, seeds, workers=1)
    side_by_side = over_seeds(_trained, seeds, workers=2)
    for a, b in zip(alone, side_by_side, strict=True):
        assert a["loss"] == b["loss"]
        assert all(torch.equal(a["weights"][k], b["weights"][k]) for k in a["weights"])
    assert alone[0]["loss"] != alone[1]["loss"]  # the seed matters: the check above could fail


@pytest.mark.skipif(not hasattr(os, "fork"), reason="separate processes need fork (Linux)")
def test_a_run_sees_the_callers_state_not_another_runs():
    counter = []

    def run(seed):
        counter.append(seed)  # a forked run changes its own copy only
        return len(counter)

    assert over_seeds(run, [0, 1, 2], workers=2) == [1, 1, 1]
    assert counter == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="separate processes need fork (Linux)")
def test_an_error_in_a_run_reaches_the_caller():
    def run(seed):
        if seed == 1:
            raise ValueError("seed 1 failed")
        return seed

    with pytest.raises(ValueError, match="seed 1 failed"):
        over_seeds(run, [0, 1], workers=2)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="separate processes need fork (Linux)")
def test_a_free_process_takes_the_next_seed_while_a_slow_run_goes_on():
    third_started = multiprocessing.get_context("fork").Event()  # shared by the forks

    def run(seed):
        if seed == 2:
            third_started.set()
        if seed == 0:  # the slow run: waits for seed 2, which runs only once seed 1's process is free
            return third_started.wait(timeout=20)
        return True

    assert over_seeds(run, [0, 1, 2], workers=2) == [True, True, True]


@pytest.mark.slow  # a fresh interpreter that forks two workers
@pytest.mark.skipif(not hasattr(os, "fork"), reason="separate processes need fork (Linux)")
def test_the_forks_share_the_lazy_import_of_the_first_optimizer():
    # In a fresh interpreter, so that nothing has imported it yet (the check before the call says so).
    script = (
        "import sys\n"
        "from attnlib.seeds import over_seeds\n"
        "before = 'torch._dynamo' in sys.modules\n"
        "in_forks = over_seeds(lambda seed: 'torch._dynamo' in sys.modules, [0, 1], workers=2)\n"
        "print(before, in_forks)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "[True,", "True]"]  # imported once, before the forks (about 2 s each)


def test_one_process_when_torch_uses_several_threads():
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert parallel_workers(3) == 1  # forking a process whose thread pool has run is unsafe
    finally:
        torch.set_num_threads(threads)
    assert 1 <= parallel_workers(3) <= 3


@pytest.mark.parametrize(
    ("seeds", "workers", "error", "message"),
    [
        ([], None, ValueError, "seeds is empty"),
        ([0, 0], None, ValueError, "distinct"),
        ([0, 1.5], None, TypeError, "seeds must be integers"),
        ([0, True], None, TypeError, "seeds must be integers"),
        ([0, 1], 0, ValueError, "workers must be a positive integer"),
    ],
)
def test_bad_arguments_are_named(seeds, workers, error, message):
    with pytest.raises(error, match=message):
        over_seeds(lambda seed: seed, seeds, workers=workers)


# The seeds a chapter averages over start at ATTNLIB_SEED_BASE (0 in the book, shifted on the stand-in)
def test_course_seeds_count_from_zero_in_the_book(monkeypatch):

    monkeypatch.delenv("ATTNLIB_SEED_BASE", raising=False)
    assert course_seeds(4) == [0, 1, 2, 3]


def test_course_seeds_count_from_the_seed_base_elsewhere(monkeypatch):

    monkeypatch.setenv("ATTNLIB_SEED_BASE", "1000")
    assert course_seeds(3) == [1000, 1001, 1002]


@pytest.mark.parametrize("base", ["-1", "ten", "1.5"])
def test_a_bad_seed_base_is_refused_by_name(monkeypatch, base):

    monkeypatch.setenv("ATTNLIB_SEED_BASE", base)
    with pytest.raises(ValueError, match="ATTNLIB_SEED_BASE must be a non-negative integer"):
        course_seeds(3)


@pytest.mark.parametrize("n", [0, -2, 2.5, True])
def test_course_seeds_needs_a_positive_count(n):

    with pytest.raises(ValueError, match="n must be a positive number of seeds"):
        course_seeds(n)

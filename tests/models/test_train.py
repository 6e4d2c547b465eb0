"""Specification of attnlib.train: the loop lowers the loss, follows its budget and schedule, stops early."""

import math

import pytest
import torch

import attnlib.train as train_module
from attnlib.data.algorithmic import sequence_task
from attnlib.data.batching import make_batches
from attnlib.seq2seq import build_model
from attnlib.train import History, evaluate_loss, loss_fn, lr_factor, train

from .tiny import tiny_batch, tiny_model


@pytest.fixture(scope="module")
def task():
    return sequence_task("copy", n=300, min_len=2, max_len=4, seed=0, vocab_size=4)


def _model(task, kind="luong"):
    return build_model(kind, task.src_vocab, task.tgt_vocab, emb=8, hidden=16, attn=8, device="cpu")


def test_training_lowers_the_loss(task):
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 16)
    model = _model(task)
    before = evaluate_loss(model, batches)
    history = train(model, batches, steps=60, lr=1e-2, progress=False, log_every=5)
    assert evaluate_loss(model, batches) < 0.5 * before
    assert history.train_loss[-1] < history.train_loss[0]


def test_history_logs_steps_and_a_cosine_learning_rate(task):
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 16)
    h = train(_model(task), batches, steps=20, lr=1e-2, log_every=5, progress=False)
    assert isinstance(h, History)
    assert h.step == [5, 10, 15, 20]
    assert len(h.time) == len(h.train_loss) == len(h.lr) == 4
    assert h.lr == sorted(h.lr, reverse=True) and h.lr[0] < 1e-2


class FakeClock:
    """A clock that moves ``tick`` seconds at every reading: the time budget, tested without wall time."""

    def __init__(self, tick: float) -> None:
        self.now, self.tick = -tick, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def test_time_budget_stops_at_the_first_step_that_would_start_after_it(task, monkeypatch):
    # Readings: 0 at the start, then two per step (before it, after it): step n starts at (2n - 1) * 0.05 s,
    # so steps 1 … 10 start within the 1 s budget and step 11 would not.
    monkeypatch.setattr(train_module, "perf_counter", FakeClock(tick=0.05))
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 16)
    history = train(_model(task), batches, seconds=1.0, lr=1e-2, log_every=1, progress=False)
    assert history.step == list(range(1, 11))
    assert history.time == pytest.approx([0.1 * n for n in range(1, 11)])


def test_with_a_time_budget_the_cosine_follows_the_elapsed_fraction(task, monkeypatch):
    monkeypatch.setattr(train_module, "perf_counter", FakeClock(tick=0.05))
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 16)
    history = train(_model(task), batches, seconds=1.0, lr=1e-2, log_every=1, progress=False)
    started = [(2 * n - 1) * 0.05 for n in range(1, 11)]  # the fraction of the budget at each step's start
    assert history.lr == pytest.approx([1e-2 * lr_factor(f, 1, 0, "cosine") for f in started])


def test_lr_factor_warms_up_then_follows_a_cosine():
    assert lr_factor(0.0, step=0, warmup=4, schedule="cosine") == pytest.approx(0.25)
    assert lr_factor(0.0, step=10, warmup=4, schedule="cosine") == pytest.approx(1.0)
    assert lr_factor(0.5, step=10, warmup=0, schedule="cosine") == pytest.approx(0.5)
    assert lr_factor(1.0, step=10, warmup=0, schedule="cosine") == pytest.approx(0.0)
    assert lr_factor(1.0, step=10, warmup=0, schedule="constant") == 1.0


def test_early_stopping_restores_the_best_weights(task):
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 16)
    model = _model(task)
    values = iter([0.5, 0.9, 0.1, 0.2, 0.3, 0.4])  # best at the second evaluation, then no improvement
    snapshots = []

    def metric(m):
        snapshots.append({k: v.clone() for k, v in m.state_dict().items()})
        return next(values)

    h = train(model, batches, steps=100, eval_every=2, patience=3, metric=metric, progress=False)
    assert h.stopped_early and h.best_step == 4 and h.eval_step == [2, 4, 6, 8, 10]
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, snapshots[1][k])


def test_restore_best_keeps_training_to_the_budget_then_restores_the_best_weights(task):
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 16)
    model = _model(task)
    values = iter([0.5, 0.9, 0.1, 0.2, 0.3])  # best at the second of five evaluations
    snapshots = []

    def metric(m):
        snapshots.append({k: v.clone() for k, v in m.state_dict().items()})
        return next(values)

    h = train(model, batches, steps=10, eval_every=2, restore_best=True, metric=metric, progress=False)
    assert not h.stopped_early and h.best_step == 4 and h.eval_step == [2, 4, 6, 8, 10]
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, snapshots[1][k])


def test_training_is_reproducible_with_a_seed(task):
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 16)
    losses = []
    for _ in range(2):
        torch.manual_seed(1)
        model = _model(task)
        losses.append(train(model, batches, steps=10, seed=5, log_every=1, progress=False).train_loss)
    assert losses[0] == losses[1]


def test_loss_ignores_padding():
    model, batch = tiny_model("bahdanau"), tiny_batch()
    logits, _ = model(batch)
    real = batch.tgt_out != 0
    expected = torch.nn.functional.cross_entropy(logits[real], batch.tgt_out[real])
    torch.testing.assert_close(loss_fn(logits, batch.tgt_out), expected)
    assert math.isfinite(loss_fn(logits, batch.tgt_out).item())


def test_a_budget_is_required(task):
    with pytest.raises(ValueError, match="budget"):
        train(_model(task), [tiny_batch()], progress=False)

"""attnlib.grading.training_loop: what set 5's question 6 sees of a learner's training loop, through the model
and the optimizer it hands in (the loss's targets, the gradient each step applied, the validation passes)."""

import copy

import pytest
import torch
import torch.nn.functional as F

from attnlib.grading import training_loop

pytestmark = pytest.mark.slow  # each test trains the model for an epoch or more


def make_loop(
    target="shifted", ignore_padding=True, clip_norm=True, valid_on="valid", zero=True, copy_best=True
):
    """A training loop, right by default, with one typical mistake when asked."""

    def loss_of(logits, target_ids, reduction="mean"):
        flat = logits.reshape(-1, logits.shape[-1]), target_ids.reshape(-1)
        return F.cross_entropy(*flat, ignore_index=0 if ignore_padding else -100, reduction=reduction)

    def train_loop(model, optimizer, train_batches, valid_batches, max_epochs, patience, clip):
        history = {"train_loss": [], "valid_loss": []}
        best, best_state, waited = float("inf"), None, 0
        for _ in range(max_epochs):
            model.train()
            for src, src_lengths, tgt in train_batches:
                logits = model(src, src_lengths, tgt[:, :-1])
                loss = loss_of(logits, tgt[:, 1:] if target == "shifted" else tgt[:, :-1])
                if zero:
                    optimizer.zero_grad()
                loss.backward()
                if clip_norm:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
                optimizer.step()
                history["train_loss"].append(loss.item())
            model.eval()
            with torch.no_grad():
                sums = [
                    (loss_of(model(s, n, t[:, :-1]), t[:, 1:], "sum").item(), int((t[:, 1:] != 0).sum()))
                    for s, n, t in (valid_batches if valid_on == "valid" else train_batches)
                ]
            valid = sum(a for a, _ in sums) / sum(b for _, b in sums)
            history["valid_loss"].append(valid)
            if valid < best:
                state = model.state_dict()
                best, best_state, waited = valid, copy.deepcopy(state) if copy_best else state, 0
            else:
                waited += 1
                if waited >= patience:
                    break
        model.load_state_dict(best_state)
        return history

    return train_loop


@pytest.fixture
def one_epoch(monkeypatch):
    monkeypatch.setitem(training_loop.BUDGET, "max_epochs", 1)


def test_a_right_loop_puts_every_real_target_and_no_padding_in_its_loss(one_epoch):
    loss = training_loop.run(make_loop(), seed=0)["record"]["loss"]
    assert loss["real"] > 0 and loss["in_loss"] == loss["right_target"] == loss["real"]
    assert loss["pad_in_loss"] == 0 and loss["inputs_right"] == loss["inputs"]


def test_padding_counted_in_the_loss_shows_in_the_gradient_of_the_padded_positions(one_epoch):
    loss = training_loop.run(make_loop(ignore_padding=False), seed=0)["record"]["loss"]
    assert loss["pad_in_loss"] > 0 and loss["right_target"] == loss["real"]


def test_a_target_that_is_the_input_itself_is_read_off_the_loss_gradient(one_epoch):
    loss = training_loop.run(make_loop(target="input"), seed=0)["record"]["loss"]
    assert loss["right_target"] < loss["in_loss"] / 10


def test_clipping_shows_as_a_step_of_norm_min_of_the_gradient_norm_and_clip(one_epoch):
    clip = training_loop.BUDGET["clip"]
    steps = training_loop.run(make_loop(), seed=0)["record"]["epochs"][0]["steps"]
    assert any(s["raw"] > clip * 1.01 for s in steps)  # the check can see something
    assert all(s["residual"] < 1e-4 and abs(s["applied"] - min(s["raw"], clip)) < 1e-3 * clip for s in steps)
    unclipped = training_loop.run(make_loop(clip_norm=False), seed=0)["record"]["epochs"][0]["steps"]
    assert max(s["applied"] for s in unclipped) > clip * 1.01
    assert all(abs(s["applied"] - s["raw"]) < 1e-6 * max(s["raw"], 1.0) for s in unclipped)


def test_gradients_never_zeroed_apply_more_than_their_own_backward_pass(one_epoch):
    steps = training_loop.run(make_loop(zero=False), seed=0)["record"]["epochs"][0]["steps"]
    assert steps[0]["residual"] < 1e-4 and all(s["residual"] > 1e-3 for s in steps[1:])


def test_each_validation_pass_is_told_apart_by_the_split_its_rows_come_from(one_epoch):
    task = training_loop.task()
    right = training_loop.run(make_loop(), seed=0)["record"]["valid_passes"]
    assert len(right) == 1 and right[0]["rows"]["valid"] == len(task.valid) and right[0]["rows"]["train"] == 0
    assert right[0]["no_grad"] and right[0]["eval"]
    wrong = training_loop.run(make_loop(valid_on="train"), seed=0)["record"]["valid_passes"]
    assert wrong[0]["rows"]["train"] == len(task.train) and wrong[0]["rows"]["valid"] == 0


def test_the_ascent_run_raises_the_validation_loss_every_epoch_and_a_right_loop_stops_after_patience():
    record = training_loop.run(make_loop(), seed=0, ascend=True)["record"]
    losses = [p["true_loss"] for p in record["valid_passes"]]
    assert all(b > a for a, b in zip(losses, losses[1:], strict=False))
    assert len(losses) == 1 + training_loop.ASCENT["patience"]


def test_the_thresholds_lie_between_a_trained_and_an_untrained_model():
    untrained = training_loop.evaluate(training_loop.build(0).eval())
    assert untrained["exact_match"] < training_loop.THRESHOLDS["exact_match"]
    assert untrained["test_loss"] > training_loop.THRESHOLDS["test_loss"]


def test_each_validation_pass_records_the_weights_it_read_so_the_weights_kept_can_be_told():
    run = training_loop.run(make_loop(), seed=0, ascend=True)
    passes = run["record"]["valid_passes"]
    assert training_loop.fingerprint(run["parameters"]) == pytest.approx(passes[0]["weights"], rel=1e-9)
    assert passes[1]["weights"] != pytest.approx(passes[0]["weights"], rel=1e-6)
    live = training_loop.run(
        make_loop(copy_best=False), seed=0, ascend=True
    )  # the "best" state is the model's own
    assert training_loop.fingerprint(live["parameters"]) != pytest.approx(passes[0]["weights"], rel=1e-6)

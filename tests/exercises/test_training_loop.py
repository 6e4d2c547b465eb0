"""attnlib.grading.training_loop: what set 5's question 6 sees of a learner's training loop, through the model
and the optimizer it hands in (the loss's targets, the gradient each step applied, the validation passes)."""

import copy

import pytest
import torch
import torch.nn.functional as F

from attnlib.grading import loop_probes, training_loop

pytestmark = pytest.mark.slow  # each test trains the model for an epoch or more


def make_loop(
    target="shifted",
    ignore_padding=True,
    clip="norm",
    valid_on="valid",
    valid_mode="eval",
    zero=True,
    copy_best=True,
    patience_offset=0,
):
    """A training loop, right by default, with one typical mistake when asked."""

    def loss_of(logits, target_ids, reduction="mean"):
        flat = logits.reshape(-1, logits.shape[-1]), target_ids.reshape(-1)
        return F.cross_entropy(*flat, ignore_index=0 if ignore_padding else -100, reduction=reduction)

    def train_loop(model, optimizer, train_batches, valid_batches, max_epochs, patience, clip_to):
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
                if clip == "norm":
                    torch.nn.utils.clip_grad_norm_(model.parameters(), clip_to)
                elif clip == "value":
                    torch.nn.utils.clip_grad_value_(model.parameters(), clip_to)
                optimizer.step()
                history["train_loss"].append(loss.item())
            model.train(valid_mode == "train")
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
                if waited >= patience + patience_offset:
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
    unclipped = training_loop.run(make_loop(clip="none"), seed=0)["record"]["epochs"][0]["steps"]
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


def test_the_thresholds_lie_between_a_trained_and_an_untrained_model():
    untrained = training_loop.evaluate(training_loop.build(0).eval())
    assert untrained["exact_match"] < training_loop.THRESHOLDS["exact_match"]
    assert untrained["test_loss"] > training_loop.THRESHOLDS["test_loss"]


# The probes (attnlib.grading.loop_probes): what is graded, read off the returned parameters alone.

STEP = {"kind": "step", "lr": 0.1, "clip": 1e9, "batch": 0}  # a clip far above the gradient's norm
CLIPPED = {"kind": "step", "lr": 1.0, "clip": 0.01, "batch": 0}  # a clip far below it
WAYPOINTS = {"kind": "waypoints", "alphas": [12, 20, 4, 16, 8, 1, 24, 28], "patience": 2, "dropout": 0.02}


def step_direction(loop, probe=STEP, seed=0):
    """The cosine of -(θ_1 - θ_0) with each loss's gradient at θ_0, and the norm of θ_1 - θ_0."""
    return loop_probes.step_cosines(training_loop.run(loop, seed, probe)["parameters"], probe, seed)


@pytest.mark.parametrize(
    "mistake, loss",
    [({}, "right"), ({"ignore_padding": False}, "padding"), ({"target": "input"}, "own_input")],
)
def test_one_unclipped_sgd_step_moves_along_the_gradient_of_the_loops_own_loss(mistake, loss):
    cosines = step_direction(make_loop(**mistake))
    assert cosines[loss] > 0.999
    others = [c for k, c in cosines.items() if k not in (loss, "norm")]
    assert max(others) < loop_probes.LOSS_COSINE  # the grader's threshold tells them apart


def test_a_clip_far_below_the_gradient_norm_makes_the_step_lr_times_clip_along_the_same_direction():
    free = loop_probes.update(training_loop.run(make_loop(), 0, STEP)["parameters"], 0)
    clipped = loop_probes.update(training_loop.run(make_loop(), 0, CLIPPED)["parameters"], 0)
    assert float(clipped.norm()) == pytest.approx(CLIPPED["lr"] * CLIPPED["clip"], rel=1e-4)
    assert float(F.cosine_similarity(free, clipped, dim=0)) > 0.9999
    for wrong in ("none", "value"):  # the control: clipped otherwise, the step is not lr · clip
        moved = loop_probes.update(training_loop.run(make_loop(clip=wrong), 0, CLIPPED)["parameters"], 0)
        assert abs(float(moved.norm()) / (CLIPPED["lr"] * CLIPPED["clip"]) - 1) > 0.1


def test_every_waypoints_validation_loss_rises_with_alpha_whatever_the_loss_split_or_average():
    alphas = [1, 3, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28]  # every alpha of the public and the hidden waypoints
    grid = {"kind": "waypoints", "alphas": alphas, "patience": 2, "dropout": 0.02}
    for seed in (0, 11, 1, 2, 3):  # the notebook's and the grader's seeds, and three more
        for key, losses in loop_probes.waypoint_losses(grid, seed).items():
            assert all(b > a for a, b in zip(losses, losses[1:], strict=False)), (seed, key, losses)


@pytest.mark.parametrize(
    "mistake, ended_on",
    [
        ({}, "best"),  # stops after the rule's epoch, on the weights of the best one
        ({"copy_best": False}, "last"),  # the "best" state is the model's own: it ends on the last weights
        ({"patience_offset": 1}, "late"),
        ({"patience_offset": -1}, "early"),
    ],
)
def test_the_waypoint_run_tells_when_a_loop_stopped_and_which_weights_it_kept(mistake, ended_on):
    run = training_loop.run(make_loop(**mistake), 0, WAYPOINTS)
    right = loop_probes.waypoint_losses(WAYPOINTS, 0)[("valid", "right", "tokens")]
    should = loop_probes.stop_epoch(right, WAYPOINTS["patience"])
    ran, ended = len(run["history"]["valid_loss"]), loop_probes.waypoint_of(run["parameters"], WAYPOINTS, 0)
    assert run["history"]["valid_loss"] == pytest.approx(right[:ran], rel=1e-5)
    best = min(range(ran), key=right.__getitem__)
    if ended_on in ("best", "last"):
        assert ran == should and ended == (best if ended_on == "best" else ran - 1) and best != ran - 1
    else:
        assert (ran > should) if ended_on == "late" else (ran < should)
        assert ended == best


def test_a_validation_in_training_mode_reports_other_losses_than_the_weights_had():
    losses = loop_probes.waypoint_losses(WAYPOINTS, 0)
    reported = training_loop.run(make_loop(valid_mode="train"), 0, WAYPOINTS)["history"]["valid_loss"]
    for values in losses.values():
        assert reported != pytest.approx(values[: len(reported)], rel=1e-4)
    on_train = training_loop.run(make_loop(valid_on="train"), 0, WAYPOINTS)["history"]["valid_loss"]
    assert on_train == pytest.approx(losses[("train", "right", "tokens")][: len(on_train)], rel=1e-5)
    assert on_train != pytest.approx(losses[("valid", "right", "tokens")][: len(on_train)], rel=1e-4)


def test_weights_moved_outside_the_waypoints_are_no_waypoint():
    parameters = dict(training_loop.build(0).state_dict())
    assert loop_probes.waypoint_of(parameters, WAYPOINTS, 0) is None  # θ_0 itself is no waypoint (alpha 0)
    run = training_loop.run(make_loop(), 0, WAYPOINTS)
    assert loop_probes.waypoint_of(run["parameters"], WAYPOINTS, 0) is not None  # the control
    run["parameters"]["encoder.embed.weight"] = run["parameters"]["encoder.embed.weight"] + 1e-3
    assert loop_probes.waypoint_of(run["parameters"], WAYPOINTS, 0) is None


@pytest.mark.parametrize(
    "probe, named",
    [
        ({"kind": "steps"}, "kind"),
        ({"kind": "step", "lr": 0.1, "clip": 1.0, "batch": 99}, "batch"),
        ({"kind": "step", "lr": float("nan"), "clip": 1.0, "batch": 0}, "lr"),
        ({"kind": "step", "lr": 0.1, "clip": -1, "batch": 0}, "clip"),
        ({"kind": "waypoints", "alphas": [1], "patience": 1, "dropout": 0.1}, "alphas"),
        ({"kind": "waypoints", "alphas": [1, 2], "patience": 2, "dropout": 0.1}, "patience"),
        ({"kind": "waypoints", "alphas": [1, 2], "patience": 1, "dropout": 1.0}, "dropout"),
    ],
)
def test_a_malformed_probe_is_refused_naming_what_is_wrong(probe, named):
    with pytest.raises(ValueError, match=named):
        training_loop.run(make_loop(), 0, probe)

"""The probes of exercise set 5's question 6: short runs of the learner's ``train_loop`` whose right result
the grader computes on its side, from the initial weights alone.

    step:       θ_1 = θ_0 - lr · g · min(1, clip / ‖g‖),    g = ∇ L(θ_0) on one training batch, plain SGD
    waypoints:  the k-th step sets the output layer to (W_0, b_0) + α_k (R, r);  L_valid rises with α

Everything in the learner's process (the model, the optimizer, ``training_loop.Recorder``'s record) can be
rewritten by the learner's code, so what is graded is read off the returned parameters, which are the run's
outcome: the update a step applied (its direction is the gradient of the loop's loss, its norm is
``lr · clip`` when clipping by the global norm is active) and which waypoint the loop ended on (the grader
knows every waypoint's validation loss, so it knows when a right loop stops and which weights it keeps). In
a waypoint run the model has dropout: a validation pass in training mode reports other losses than the
weights'.
The validation loss rises with α whatever slip the loop's loss has (its targets, its padding), so the slips of
the loss do not turn into slips of early stopping (``tests/exercises/test_training_loop.py`` holds that on 5
seeds; ``benchmarks/loop_thresholds.py`` runs every probe on 20). Source: issue 27 (set 5 q6's record of
what ran was forgeable).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import torch
import torch.nn.functional as F

from attnlib.grading import training_loop

# The loop's loss and its typical slips, told apart by the direction of the update they cause.
LOSSES = ("right", "padding", "own_input", "no_eos")
_DIRECTION_SEED = 2027  # R and r: fixed, drawn at the scale of W_0
# What the checks ask (the master's q6 tests and benchmarks/loop_thresholds.py): the unclipped step's cosine
# with the right loss's gradient (a mean per sentence: 0.997; <eos> left out: at most 0.97), the clipped
# step's norm against lr · clip (relative) and its cosine with the unclipped step.
LOSS_COSINE, CLIP_RTOL, CLIP_COSINE = 0.99, 1e-3, 0.999


def _number(probe: dict, key: str, low: float, high: float) -> float:
    value = probe.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low < value < high:
        raise ValueError(f"probe[{key!r}] should be a number in ({low}, {high}), got {value!r}")
    return float(value)


def checked(probe: Any) -> dict[str, Any]:
    """The probe, held to its form (a clear error naming what is wrong, never a silent default)."""
    if not isinstance(probe, dict) or probe.get("kind") not in ("step", "waypoints"):
        raise ValueError(f"probe should be a dict whose 'kind' is 'step' or 'waypoints', got {probe!r}")
    if probe["kind"] == "step":
        batch = probe.get("batch")
        n = len(training_loop.batches(training_loop.task().train))
        if isinstance(batch, bool) or not isinstance(batch, int) or not 0 <= batch < n:
            raise ValueError(
                f"probe['batch'] should be the index of a training batch, 0 to {n - 1}, got {batch!r}"
            )
        return {
            "kind": "step",
            "lr": _number(probe, "lr", 0, 10),
            "clip": _number(probe, "clip", 0, math.inf),
            "batch": batch,
        }
    alphas = probe.get("alphas")
    if not (
        isinstance(alphas, (list, tuple))
        and 2 <= len(alphas) <= 20
        and all(isinstance(a, (int, float)) and not isinstance(a, bool) and 0 <= a <= 100 for a in alphas)
    ):
        raise ValueError(f"probe['alphas'] should be 2 to 20 numbers in [0, 100], got {alphas!r}")
    patience = probe.get("patience")
    if isinstance(patience, bool) or not isinstance(patience, int) or not 1 <= patience < len(alphas):
        raise ValueError(f"probe['patience'] should be an int from 1 to len(alphas) - 1, got {patience!r}")
    return {
        "kind": "waypoints",
        "alphas": [float(a) for a in alphas],
        "patience": patience,
        "dropout": _number(probe, "dropout", 0, 1),
    }


def setup(probe: Any, seed: int):
    """What ``training_loop.run`` hands the loop in a probe run: the network, the training and validation
    batches, max_epochs, patience, clip and a function that makes the optimizer of the model's parameters."""
    probe = checked(probe)
    t = training_loop.task()
    train, valid = training_loop.batches(t.train), training_loop.batches(t.valid)
    if probe["kind"] == "step":
        lr = probe["lr"]
        return (
            training_loop.build(seed),
            [train[probe["batch"]]],
            valid[:1],
            1,
            1,
            probe["clip"],
            lambda parameters: torch.optim.SGD(parameters, lr=lr),
        )
    net = training_loop.build(seed, dropout=probe["dropout"])
    alphas = probe["alphas"]
    return (
        net,
        train[:1],
        valid,
        len(alphas),
        probe["patience"],
        1.0,
        lambda parameters: Waypoints(parameters, net.decoder.out.W_y, alphas),
    )


def _direction(weight: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """R and r: a fixed random matrix and vector at the scale of the layer's initial weight."""
    g = torch.Generator().manual_seed(_DIRECTION_SEED)
    scale = float(weight.detach().std())
    return torch.randn(weight.shape, generator=g) * scale, torch.randn(bias.shape, generator=g) * scale


class Waypoints(torch.optim.Optimizer):
    """An optimizer that does not follow the gradient: its k-th step sets ``layer`` to
    (W_0, b_0) + α_k (R, r), in place (a "best" state that holds the model's own tensors keeps changing)."""

    def __init__(self, parameters, layer: torch.nn.Linear, alphas: list[float]) -> None:
        super().__init__(parameters, {"lr": 1.0})  # for loops that read or schedule an lr: it changes nothing
        self.layer, self.alphas, self.taken = layer, list(alphas), 0
        self.start = (layer.weight.detach().clone(), layer.bias.detach().clone())
        self.direction = _direction(layer.weight, layer.bias)

    @torch.no_grad()
    def step(self, closure=None):  # noqa: ARG002 - the optimizer's signature
        alpha = self.alphas[min(self.taken, len(self.alphas) - 1)]
        self.taken += 1
        for p, p0, d in zip((self.layer.weight, self.layer.bias), self.start, self.direction, strict=True):
            p.copy_(p0 + alpha * d)


# ---- the grader's side: what the right loop's run gives, from the initial weights --------------------------


def flat(parameters: dict[str, torch.Tensor], names: list[str]) -> torch.Tensor:
    """The parameters ``names`` as one float64 vector (a missing one raises KeyError)."""
    return torch.cat([parameters[n].detach().double().reshape(-1) for n in names])


@lru_cache(maxsize=4)
def _start(seed: int) -> dict[str, torch.Tensor]:
    """θ_0 of ``seed`` (cached: the grader asks for it for every submission; callers do not change it)."""
    return {n: p.detach().clone() for n, p in training_loop.build(seed).named_parameters()}


def names() -> list[str]:
    return list(_start(0))


def update(parameters: dict[str, torch.Tensor], seed: int) -> torch.Tensor:
    """θ_1 - θ_0: what the step of a step probe moved, as one vector."""
    return flat(parameters, names()) - flat(_start(seed), names())


def step_gradients(probe: dict, seed: int) -> dict[str, torch.Tensor]:
    """The gradient at θ_0, on the probe's batch, of the mean of each loss of ``LOSSES``, one vector each
    (cached by probe and seed: the same for every submission)."""
    probe = checked(probe)
    return _step_gradients(probe["batch"], seed)


@lru_cache(maxsize=8)
def _step_gradients(batch: int, seed: int) -> dict[str, torch.Tensor]:
    src, src_lengths, tgt = training_loop.batches(training_loop.task().train)[batch]
    out = {}
    for kind in LOSSES:
        net = training_loop.build(seed)
        total, count = training_loop.loss_sum(
            training_loop.LoopModel(net)(src, src_lengths, tgt[:, :-1]), tgt, kind
        )
        (total / count).backward()
        out[kind] = torch.cat([p.grad.double().reshape(-1) for p in net.parameters()])
    return out


def step_cosines(parameters: dict[str, torch.Tensor], probe: dict, seed: int) -> dict[str, float]:
    """The cosine of the step θ_0 - θ_1 with the gradient of each loss of ``LOSSES`` (1 for the loss the loop
    used), and "norm": the step's norm."""
    moved = update(parameters, seed)
    out = {k: float(F.cosine_similarity(-moved, g, dim=0)) for k, g in step_gradients(probe, seed).items()}
    return {**out, "norm": float(moved.norm())}


def waypoint_losses(probe: dict, seed: int) -> dict[tuple[str, str, str], list[float]]:
    """(split, loss, average) -> the loss of every waypoint, in eval mode: split "valid" or "train" (the run's
    one training batch), loss of ``LOSSES[:3]``, average over the split's "tokens" (those the loss covers), of
    its "batches"' means, or its sum over the "real tokens" (padding counted, divided by the real ones);
    cached by probe and seed."""
    return _waypoint_losses(tuple(checked(probe)["alphas"]), seed)


@lru_cache(maxsize=8)
def _waypoint_losses(alphas: tuple[float, ...], seed: int) -> dict[tuple[str, str, str], list[float]]:
    t = training_loop.task()
    splits = {"valid": training_loop.batches(t.valid), "train": training_loop.batches(t.train)[:1]}
    net = training_loop.build(seed).eval()
    layer = net.decoder.out.W_y  # the only layer a waypoint moves: its input is the same at every waypoint
    (w0, b0), (R, r) = (layer.weight.detach(), layer.bias.detach()), _direction(layer.weight, layer.bias)
    seen: list[torch.Tensor] = []
    hook = layer.register_forward_hook(lambda module, args, output: seen.append(args[0].detach()))
    with torch.no_grad():
        features = {}  # split -> the output layer's input for each batch (one forward pass per batch)
        for split, data in splits.items():
            seen.clear()
            for s, n, tgt in data:
                training_loop.LoopModel(net)(s, n, tgt[:, :-1])
            features[split] = list(seen)
    hook.remove()
    out: dict[tuple[str, str, str], list[float]] = {}
    for alpha in alphas:
        weight, bias = w0 + alpha * R, b0 + alpha * r
        for split, data in splits.items():
            logits = [F.linear(x, weight, bias) for x in features[split]]  # (B, T + 1, V) at this waypoint
            real = [training_loop.loss_sum(z, tgt)[1] for z, (_, _, tgt) in zip(logits, data, strict=True)]
            for kind in LOSSES[:3]:
                sums = [
                    training_loop.loss_sum(z, tgt, kind) for z, (_, _, tgt) in zip(logits, data, strict=True)
                ]
                averages = {
                    "tokens": float(sum(s for s, _ in sums)) / sum(c for _, c in sums),
                    "batches": sum(float(s) / c for s, c in sums) / len(sums),
                    "real tokens": float(sum(s for s, _ in sums)) / sum(real),
                }
                for average, value in averages.items():
                    out.setdefault((split, kind, average), []).append(value)
    return out


def waypoint_of(parameters: dict[str, torch.Tensor], probe: dict, seed: int) -> int | None:
    """Which waypoint (0-based) the returned parameters are, or None: every other parameter as it started and
    the output layer at (W_0, b_0) + α_k (R, r) for one of the probe's α_k."""
    probe = checked(probe)
    start = _start(seed)
    layer = ("decoder.out.W_y.weight", "decoder.out.W_y.bias")
    others = [n for n in names() if n not in layer]
    if not torch.equal(flat(parameters, others), flat(start, others)):
        return None
    got = flat(parameters, list(layer))
    w0 = flat(start, list(layer))
    d = torch.cat([x.double().reshape(-1) for x in _direction(start[layer[0]], start[layer[1]])])
    for k, alpha in enumerate(probe["alphas"]):
        if torch.allclose(got, w0 + alpha * d, rtol=1e-5, atol=1e-6):
            return k
    return None


def reported_split(history: list[float], losses: dict[tuple[str, str, str], list[float]]) -> str | None:
    """Which split the reported validation losses are the losses of ("valid" or "train", by
    ``waypoint_losses``, whatever the loss and the average, to a relative 1e-4), or None: neither (another
    mode, other weights)."""

    def matches(values: list[float]) -> bool:
        return len(history) <= len(values) and all(
            abs(a - b) <= 1e-4 * abs(b) for a, b in zip(history, values[: len(history)], strict=True)
        )

    for split in ("valid", "train"):
        if history and any(matches(v) for (where, _, _), v in losses.items() if where == split):
            return split
    return None


def stop_epoch(losses: list[float], patience: int) -> int:
    """How many epochs early stopping runs on these validation losses: it stops once ``patience`` epochs in a
    row have not lowered the best, or at the end."""
    best, waited = math.inf, 0
    for epoch, value in enumerate(losses, 1):
        if value < best:
            best, waited = value, 0
        else:
            waited += 1
            if waited >= patience:
                return epoch
    return len(losses)

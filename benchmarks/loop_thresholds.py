"""Where exercise set 5's question 6 (a training loop the learner writes) puts its thresholds: the reference
loop and typical wrong loops, each on 20 seeds at the grading budget (``attnlib.grading.training_loop``), one
thread per process.

    nice .venv/bin/python benchmarks/loop_thresholds.py [SEEDS] [JOBS]     # 20 seeds, 2 processes by default

For every loop and seed it runs the main training (``run``) and the grader's measures of the returned weights
(``evaluate``), then the three probe runs of the hidden tests (``attnlib.grading.loop_probes``: one unclipped
and one clipped step of plain SGD, the waypoint run) and their checks on the returned parameters, and prints
per loop the range (worst to best over the seeds) of each outcome and how many seeds pass each probe. An
outcome may carry points only where every reference seed beats every wrong seed by a margin; a probe check
only where it passes every reference seed and fails every seed of its mistake, and no other.

Measured 2026-11-28 (20 seeds 0-19 each, 2 processes of one thread, on the Intel machine at load 2 to 3; CPU s
of one loop: training, measures and probes): exact match and loss per token of the trained weights on the 400
held-out dates, and the probe checks passed (of 20: loss, clipping, validation, stopping, best weights kept):
    reference            0.285-0.695  0.128-0.269   20 20 20 20 20   3.9-5.1 s
    targets not shifted  0.000        12.15-13.66    0 20 20 20 20   (cosine with the right one 0.06-0.34)
    padding in the loss  0.247-0.598  0.169-0.293    0 20 20 20 20   (cosine 0.62-0.74): outcome overlaps
    gradients not zeroed 0.007-0.070  0.432-0.593   20 20 20 20 20   (one probe step: nothing to add up)
    no clipping          0.263-0.652  0.144-0.298   20  0 20 20 20   outcome overlaps
    clip by value        = no clipping               20  0 20 20 20
    validates on train   = reference  (same run)    20 20  0 20 20
    validates in train mode = reference             20 20  0 20 20   (the waypoint model has dropout)
    no early stopping    = reference                20 20 20  0  0
    last weights kept    = reference                20 20 20 20  0
    patience off by one  = reference                20 20 20  0 20
    mean per sentence    0.323-0.675  0.127-0.266   20 20 20 20 20   (cosine 0.997-0.998: not a slip)
    <eos> left out       0.000        0.774-1.009    0 20 20 20 20   (cosine 0.94-0.97)
So the thresholds (exact match >= 0.15, loss <= 0.35) separate the targets not shifted, the gradients never
zeroed and <eos> left out from every reference seed, and each probe check fails exactly its own mistakes.
"""

from __future__ import annotations

import copy
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch
import torch.nn.functional as F

from attnlib.data.vocab import EOS_ID

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import numeric_env  # noqa: E402

numeric_env.apply()

from attnlib.grading import loop_probes as probes  # noqa: E402
from attnlib.grading import training_loop as harness  # noqa: E402


def loop(mistake: str = ""):
    """The reference loop, or one typical mistake of it."""

    def loss_of(logits, target, reduction="mean"):
        ignore = -100 if mistake == "pad_in_loss" else 0
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=ignore, reduction=reduction
        )

    def train_loss(logits, target):
        if mistake == "no_eos":  # <eos> left out of the loss
            target = target.masked_fill(target == EOS_ID, 0)
        if mistake == "seq_mean":  # the mean per sentence, then over the batch: another weighting, not a slip
            flat = logits.reshape(-1, logits.shape[-1]), target.reshape(-1)
            per = F.cross_entropy(*flat, ignore_index=0, reduction="none").view(target.shape)
            return (per.sum(1) / (target != 0).sum(1)).mean()
        return loss_of(logits, target)

    def train_loop(model, optimizer, train_batches, valid_batches, max_epochs, patience, clip):
        history = {"train_loss": [], "valid_loss": []}
        best, best_state, waited = float("inf"), None, 0
        for _ in range(max_epochs):
            model.train()
            total = 0.0
            for src, src_lengths, tgt in train_batches:
                logits = model(src, src_lengths, tgt[:, :-1])
                loss = train_loss(logits, tgt[:, :-1] if mistake == "not_shifted" else tgt[:, 1:])
                if mistake != "no_zero_grad":
                    optimizer.zero_grad()
                loss.backward()
                if mistake == "clip_value":
                    torch.nn.utils.clip_grad_value_(model.parameters(), clip)
                elif mistake != "no_clip":
                    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
                optimizer.step()
                total += loss.item()
            model.train(mistake == "valid_train_mode")  # eval mode, unless that is the mistake
            with torch.no_grad():
                summed, tokens = 0.0, 0
                for src, src_lengths, tgt in train_batches if mistake == "valid_on_train" else valid_batches:
                    logits = model(src, src_lengths, tgt[:, :-1])
                    target = tgt[:, :-1] if mistake == "not_shifted" else tgt[:, 1:]
                    summed += loss_of(logits, target, "sum").item()
                    tokens += target.numel() if mistake == "pad_in_loss" else int((target != 0).sum())
            valid = summed / tokens
            history["train_loss"].append(total / len(train_batches))
            history["valid_loss"].append(valid)
            if valid < best:
                best, best_state, waited = valid, copy.deepcopy(model.state_dict()), 0
            elif mistake != "no_early_stopping":
                waited += 1
                if (waited > patience) if mistake == "patience_off_by_one" else (waited >= patience):
                    break
        if mistake not in ("no_early_stopping", "no_restore"):
            model.load_state_dict(best_state)
        return history

    return train_loop


MISTAKES = [
    "",
    "not_shifted",
    "pad_in_loss",
    "no_zero_grad",
    "no_clip",
    "clip_value",
    "valid_on_train",
    "valid_train_mode",
    "no_early_stopping",
    "no_restore",
    "patience_off_by_one",
    "seq_mean",
    "no_eos",
]


# The probes of the hidden tests (exercises/source/05_luong_attention.ipynb, q6), as the grader runs them.
LOSS_PROBE = {"kind": "step", "lr": 0.05, "clip": 1e9, "batch": 3}
CLIP_PROBE = {"kind": "step", "lr": 2.0, "clip": 0.005, "batch": 3}
STOP_PROBE = {"kind": "waypoints", "alphas": [8, 3, 14, 10, 6, 1, 24, 28], "patience": 3, "dropout": 0.02}


def probed(mistake: str, seed: int) -> dict:
    """The hidden tests' checks of the probes, on the returned parameters (attnlib.grading.loop_probes)."""
    free = harness.run(loop(mistake), seed, LOSS_PROBE)["parameters"]
    cosines = probes.step_cosines(free, LOSS_PROBE, seed)
    clipped = probes.update(harness.run(loop(mistake), seed, CLIP_PROBE)["parameters"], seed)
    along = float(F.cosine_similarity(clipped, probes.update(free, seed), dim=0))
    want = CLIP_PROBE["lr"] * CLIP_PROBE["clip"]
    run = harness.run(loop(mistake), seed, STOP_PROBE)
    losses = probes.waypoint_losses(STOP_PROBE, seed)
    right, ran = losses[("valid", "right", "tokens")], len(run["history"]["valid_loss"])
    ended = probes.waypoint_of(run["parameters"], STOP_PROBE, seed)
    should = probes.stop_epoch(right, STOP_PROBE["patience"])
    return {
        "cos_right": cosines["right"],
        "loss_right": cosines["right"] >= probes.LOSS_COSINE,
        "clipped": abs(float(clipped.norm()) - want) <= probes.CLIP_RTOL * want
        and along >= probes.CLIP_COSINE,
        "valid_split": probes.reported_split(run["history"]["valid_loss"], losses) == "valid",
        "stops": ran == should and ended is not None and ended < ran,
        "keeps": ended == min(range(min(ran, len(right))), key=right.__getitem__),
    }


def measure(args: tuple[str, int]) -> dict:
    mistake, seed = args
    torch.set_num_threads(1)
    start = time.process_time()
    main = harness.run(loop(mistake), seed)
    trained = time.process_time() - start
    out = harness.evaluate(harness.load(main["parameters"]))
    checks = probed(mistake, seed)
    return {**out, **checks, "train_cpu": trained, "cpu": time.process_time() - start}


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    harness.task()
    print(f"budget {harness.BUDGET}, task {harness.TASK}, sizes {harness.SIZES}")
    with ProcessPoolExecutor(jobs) as pool:
        for mistake in MISTAKES:
            runs = list(pool.map(measure, [(mistake, seed) for seed in range(seeds)]))
            name = mistake or "reference"
            ranges = ", ".join(
                f"{key} {min(r[key] for r in runs):.3f}-{max(r[key] for r in runs):.3f}"
                for key in ("exact_match", "valid_loss", "test_loss", "train_cpu", "cpu")
            )
            counts = ", ".join(
                f"{key} {sum(bool(r[key]) for r in runs)}/{len(runs)}"
                for key in ("loss_right", "clipped", "valid_split", "stops", "keeps")
            )
            cosine = f"{min(r['cos_right'] for r in runs):.3f}-{max(r['cos_right'] for r in runs):.3f}"
            print(f"{name} ({len(runs)} seeds): {ranges}", flush=True)
            print(f"    probes passed: {counts}; cosine with the right loss's gradient {cosine}", flush=True)


if __name__ == "__main__":
    main()

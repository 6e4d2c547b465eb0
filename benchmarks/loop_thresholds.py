"""Where exercise set 5's question 6 (a training loop the learner writes) puts its thresholds: the reference
loop and typical wrong loops, each on 20 seeds at the grading budget (``attnlib.grading.training_loop``), one
thread per process.

    nice .venv/bin/python benchmarks/loop_thresholds.py [SEEDS] [JOBS]     # 20 seeds, 2 processes by default

For every loop and seed it runs the main training (``run``), the run that checks early stopping
(``run(..., ascend=True)``) and the grader's measures of the returned weights (``evaluate``), and prints per
loop the range (worst to best over the seeds) of each outcome and how many seeds each check of what ran
passes. An outcome may carry points only where every reference seed beats every wrong seed by a margin.

Measured 2026-11-28 (20 seeds 0-19 each, 2 processes of one thread at load 5 to 8; CPU s of one run under that
load): exact match and loss per token of the trained weights on the 400 held-out dates, and the checks of what
ran that pass (of 20):
    reference            0.285-0.695  0.128-0.269   all checks 20/20; 32-51 of 60 steps over clip; 3.5-5.0 s
    targets not shifted  0.000        12.15-13.66   loss check 0/20 (its targets are its inputs)
    padding in the loss  0.247-0.598  0.169-0.293   loss check 0/20 (padded positions in it): outcome overlaps
    gradients not zeroed 0.007-0.070  0.432-0.593   clipping as measured here 0/20 (steps not multiples of g)
    no clipping          0.263-0.652  0.144-0.298   clipping 0/20: outcome overlaps
    clip by value        = no clipping (no gradient entry reaches 0.2)
    validates on train   = reference  (same run)    validation split 0/20
    no early stopping    = reference                ascent run: 8 epochs instead of 3, best weights 0/20
    last weights kept    = reference                best weights 0/20
    patience off by one  = reference                ascent run: 4 epochs instead of 3
So the thresholds (exact match >= 0.15, loss <= 0.35) separate the targets not shifted and the gradients never
zeroed from every reference seed; the other mistakes are told by what ran.
"""

from __future__ import annotations

import copy
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import numeric_env  # noqa: E402

numeric_env.apply()

from attnlib.grading import training_loop as harness  # noqa: E402


def loop(mistake: str = ""):
    """The reference loop, or one typical mistake of it."""

    def loss_of(logits, target, reduction="mean"):
        ignore = -100 if mistake == "pad_in_loss" else 0
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=ignore, reduction=reduction
        )

    def train_loop(model, optimizer, train_batches, valid_batches, max_epochs, patience, clip):
        history = {"train_loss": [], "valid_loss": []}
        best, best_state, waited = float("inf"), None, 0
        for _ in range(max_epochs):
            model.train()
            total = 0.0
            for src, src_lengths, tgt in train_batches:
                logits = model(src, src_lengths, tgt[:, :-1])
                loss = loss_of(logits, tgt[:, :-1] if mistake == "not_shifted" else tgt[:, 1:])
                if mistake != "no_zero_grad":
                    optimizer.zero_grad()
                loss.backward()
                if mistake == "clip_value":
                    torch.nn.utils.clip_grad_value_(model.parameters(), clip)
                elif mistake != "no_clip":
                    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
                optimizer.step()
                total += loss.item()
            model.eval()
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
    "no_early_stopping",
    "no_restore",
    "patience_off_by_one",
]


def what_ran(record: dict, clip: float) -> dict:
    """The checks of what ran, from ``run``'s record (as the hidden tests read it)."""
    loss = record["loss"]
    steps = [s for e in record["epochs"] for s in e["steps"]]
    over = [s for s in steps if s["raw"] > clip * 1.01]
    clipped = all(
        s["residual"] < 1e-4 and abs(s["applied"] - min(s["raw"], clip)) <= 1e-3 * clip for s in steps
    )
    passes = record["valid_passes"]
    return {
        "loss_right": loss["pad_in_loss"] == 0 and loss["right_target"] == loss["real"] > 0,
        "pad_in_loss": loss["pad_in_loss"] > 0,
        "inputs_right": loss["inputs_right"] == loss["inputs"] > 0,
        "steps_over_clip": len(over),
        "clipped": clipped and bool(over),
        "valid_split": all(p["rows"]["valid"] > 0 and p["rows"]["train"] == 0 for p in passes)
        and bool(passes),
    }


def stops_right(record: dict, patience: int, max_epochs: int) -> tuple[int, int]:
    """(epochs run, epochs the rule gives on the recorded validation losses)."""
    losses = [p["true_loss"] for p in record["valid_passes"]]
    best, waited, expected = float("inf"), 0, len(losses)
    for i, value in enumerate(losses):
        if value < best:
            best, waited = value, 0
        else:
            waited += 1
            if waited >= patience:
                expected = i + 1
                break
    return len(losses), min(expected, max_epochs)


def measure(args: tuple[str, int]) -> dict:
    mistake, seed = args
    torch.set_num_threads(1)
    start = time.process_time()
    main = harness.run(loop(mistake), seed)
    trained = time.process_time() - start
    out = harness.evaluate(harness.load(main["parameters"]))
    ascent = harness.run(loop(mistake), seed, ascend=True)
    cpu = time.process_time() - start
    ran = what_ran(main["record"], harness.BUDGET["clip"])
    ran_ascent, expected = stops_right(
        ascent["record"], harness.ASCENT["patience"], harness.ASCENT["max_epochs"]
    )
    final = harness.valid_loss(harness.load(ascent["parameters"]), harness.batches(harness.task().valid))
    best = min(p["true_loss"] for p in ascent["record"]["valid_passes"])
    return {
        **out,
        **ran,
        "epochs": len(main["record"]["valid_passes"]),
        "ascent_epochs": ran_ascent,
        "ascent_rule": expected,
        "restored": abs(final - best) <= 1e-6 * best,
        "train_cpu": trained,
        "cpu": cpu,
    }


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    harness.task()
    print(f"budget {harness.BUDGET}, ascent {harness.ASCENT}, task {harness.TASK}, sizes {harness.SIZES}")
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
                for key in ("loss_right", "pad_in_loss", "inputs_right", "clipped", "valid_split", "restored")
            )
            epochs = sorted({(r["epochs"], r["ascent_epochs"], r["ascent_rule"]) for r in runs})
            over = f"{min(r['steps_over_clip'] for r in runs)}-{max(r['steps_over_clip'] for r in runs)}"
            print(f"{name} ({len(runs)} seeds): {ranges}", flush=True)
            print(
                f"    what ran: {counts}; steps over clip {over}; (epochs, ascent epochs, rule) {epochs}",
                flush=True,
            )


if __name__ == "__main__":
    main()

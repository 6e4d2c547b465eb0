"""One training loop for every model of the course.

    loss = cross-entropy(logits, tgt_out), <pad> ignored         (teacher forcing: the model sees tgt_in)
    Adam, gradient clipping (Pascanu et al. 2013), linear warm-up then cosine decay over the budget

The budget is a number of steps, a number of seconds, or both (whichever ends first). With a time budget the
cosine follows the elapsed fraction of it, so the learning rate reaches its floor when time runs out, however
fast the machine is. Early stopping watches the validation metric (or loss) and restores the best weights.
Returns a :class:`History` of lists, ready for plotting.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from time import perf_counter  # the clock of the time budget (tests replace it)
from typing import Any

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from attnlib.data.vocab import PAD_ID
from attnlib.device import device as default_device
from attnlib.modes import evaluating


@dataclass
class History:
    step: list[int] = field(default_factory=list)  # at every logged step
    time: list[float] = field(default_factory=list)  # seconds since the start
    train_loss: list[float] = field(default_factory=list)  # mean over the steps since the last log
    lr: list[float] = field(default_factory=list)
    eval_step: list[int] = field(default_factory=list)  # at every evaluation
    eval_time: list[float] = field(default_factory=list)
    valid_loss: list[float] = field(default_factory=list)
    valid_metric: list[float] = field(default_factory=list)  # empty without a metric
    best_step: int | None = None
    stopped_early: bool = False


def loss_fn(logits: torch.Tensor, tgt_out: torch.Tensor, pad: int = PAD_ID) -> torch.Tensor:
    """Mean cross-entropy over the real target tokens: logits ``(B, T, V)``, tgt_out ``(B, T)``."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=pad)


def teacher_forced_loss(model: torch.nn.Module, batch) -> torch.Tensor:
    """The seq2seq objective: ``loss_fn`` of the logits the model gives when fed ``batch.tgt_in``."""
    logits, _ = model(batch)
    return loss_fn(logits, batch.tgt_out)


@torch.no_grad()
def evaluate_loss(model, batches: Iterable, device: torch.device | None = None) -> float:
    """Teacher-forced cross-entropy per token over ``batches``."""
    device = device or next(model.parameters()).device
    total, count = 0.0, 0
    with evaluating(model):
        for batch in batches:
            batch = batch.to(device)
            logits, _ = model(batch)
            n = int((batch.tgt_out != PAD_ID).sum())
            total += float(loss_fn(logits, batch.tgt_out)) * n
            count += n
    return total / max(count, 1)


def lr_factor(progress: float, step: int, warmup: int, schedule: str, floor: float = 0.0) -> float:
    """Multiplier of the base learning rate: linear warm-up over ``warmup`` steps, then
    ``floor + (1 - floor) * (1 + cos(pi * progress)) / 2`` for "cosine" (progress in [0, 1]),
    or 1 for "constant"."""
    if warmup and step < warmup:
        return (step + 1) / warmup
    if schedule == "constant":
        return 1.0
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(max(progress, 0.0), 1.0)))


def _epochs(batches, seed: int):
    """Yield batches forever: a list is reshuffled every epoch; a callable is called with the epoch number."""
    rng = random.Random(seed)
    epoch = 0
    while True:
        if callable(batches):
            items = list(batches(epoch))
        else:
            items = list(batches)
            rng.shuffle(items)
        if not items:
            raise ValueError("train_batches is empty")
        yield from items
        epoch += 1


def train(
    model: torch.nn.Module,
    train_batches: Iterable | Callable[[int], Iterable],
    valid_batches: Iterable | None = None,
    *,
    steps: int | None = None,
    seconds: float | None = None,
    lr: float = 3e-3,
    weight_decay: float = 0.0,
    clip: float | None = 1.0,
    schedule: str = "cosine",
    warmup: int = 0,
    min_lr_factor: float = 0.0,
    patience: int | None = None,
    restore_best: bool = False,
    seed: int | None = 0,
    eval_every: int = 100,
    log_every: int = 10,
    metric: Callable[[torch.nn.Module], float] | None = None,
    progress: bool = True,
    objective: Callable[[torch.nn.Module, Any], torch.Tensor] | None = None,
) -> History:
    """Train ``model`` in place with Adam; return its :class:`History`.

    Args:
        train_batches: a list of ``Batch`` (reshuffled each epoch) or ``f(epoch) -> batches``.
        valid_batches: batches for the validation loss, every ``eval_every`` steps and at the end.
        steps / seconds: the budget; at least one is required; training stops at whichever comes first.
            Wall-clock time includes evaluations (``metric`` may decode: keep ``eval_every`` large).
        schedule: "cosine" (decay to ``min_lr_factor * lr`` over the budget) or "constant".
        patience: stop after this many evaluations without improvement (of ``metric`` if given, higher is
            better; else of the validation loss), then restore the best weights. None: never stop early.
        restore_best: without early stopping, still end with the best weights seen at an evaluation (model
            selection on held-out data); implied by ``patience``.
        seed: seeds torch and the batch order (None: leave the RNGs alone).
        metric: ``f(model) -> float``, e.g. exact match of greedy decoding on held-out data.
        objective: ``f(model, batch) -> loss`` to minimise; default: ``teacher_forced_loss`` (seq2seq).
    """
    if steps is None and seconds is None:
        raise ValueError("give a budget: steps=..., seconds=..., or both")
    if schedule not in ("cosine", "constant"):
        raise ValueError(f"schedule must be 'cosine' or 'constant', got {schedule!r}")
    if seed is not None:
        torch.manual_seed(seed)
    device = next(model.parameters()).device
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    history = History()
    best, best_state, bad_evals = -math.inf, None, 0
    batches = _epochs(train_batches, 0 if seed is None else seed)
    bar = tqdm(
        total=steps if steps is not None else round(seconds),
        disable=not progress,
        unit="step" if steps is not None else "s",
    )
    start, running, n_running, step = perf_counter(), 0.0, 0, 0

    def evaluate(now: float) -> bool:
        """Log validation; return True when patience has run out."""
        nonlocal best, best_state, bad_evals
        history.eval_step.append(step)
        history.eval_time.append(now)
        valid_loss = evaluate_loss(model, valid_batches, device) if valid_batches is not None else math.nan
        history.valid_loss.append(valid_loss)
        value = -valid_loss
        if metric is not None:
            value = metric(model)
            history.valid_metric.append(value)
        bar.set_postfix(valid_loss=f"{valid_loss:.3f}", **({"metric": f"{value:.4f}"} if metric else {}))
        if (patience is None and not restore_best) or math.isnan(value):
            return False
        if value > best:
            best, bad_evals, history.best_step = value, 0, step
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            return False
        if patience is None:
            return False
        bad_evals += 1
        return bad_evals >= patience

    model.train()
    while True:
        elapsed = perf_counter() - start
        fraction = max(step / steps if steps else 0.0, elapsed / seconds if seconds else 0.0)
        if fraction >= 1.0:
            break
        factor = lr_factor(fraction, step, warmup, schedule, min_lr_factor)
        for group in opt.param_groups:
            group["lr"] = lr * factor
        loss = (objective or teacher_forced_loss)(model, next(batches).to(device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        step += 1
        running, n_running = running + loss.item(), n_running + 1
        now = perf_counter() - start
        bar.update(1 if steps is not None else round(now) - bar.n)
        if step % log_every == 0:
            history.step.append(step)
            history.time.append(now)
            history.train_loss.append(running / n_running)
            history.lr.append(lr * factor)
            bar.set_description(f"loss {running / n_running:.3f}")
            running, n_running = 0.0, 0
        if (valid_batches is not None or metric is not None) and step % eval_every == 0:
            if evaluate(now):
                history.stopped_early = True
                break
    if (valid_batches is not None or metric is not None) and (
        not history.eval_step or history.eval_step[-1] != step
    ):
        evaluate(perf_counter() - start)
    bar.close()
    if best_state is not None and history.best_step != step:
        model.load_state_dict(best_state)
    return history


def seed_everything(seed: int) -> None:
    """Seed Python's and torch's RNGs (and CUDA's, when ``attnlib.device()`` is a GPU)."""
    random.seed(seed)
    torch.manual_seed(seed)
    if default_device().type == "cuda":
        torch.cuda.manual_seed_all(seed)

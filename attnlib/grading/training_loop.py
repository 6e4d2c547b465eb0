"""The model, data and observation of exercise set 5's question 6: a training loop the learner writes.

The learner writes ``train_loop(model, optimizer, train_batches, valid_batches, max_epochs, patience, clip)``.
``run(train_loop, seed)`` hands it chapter 4's Bahdanau model (small) on a slice of the dates task whose
targets are written out, "3 march 2019" (10 to 17 characters, so batches have mixed lengths on both sides),
an Adam optimizer and padded batches ``(src (B, S), src_lengths (B,), tgt (B, T + 2))`` with
``tgt = <sos> y_1 … y_T <eos>`` padded with 0, and records what ran, through those objects only (the words of
the messages):

- the loss: a hook on the logits reads the gradient the loss sends to each target position. A position is in
  the loss when its gradient is not 0, and cross-entropy's gradient softmax(z) - onehot(y) is smallest at the
  target y, so its argmin is the target the loss used (shifted or not) and a padded position shows;
- the steps: hooks on the parameters read the gradient of each backward pass, before anything changes it;
  the optimizer's step reads the gradient it applies, a multiple of the backward's own unless the gradients of
  earlier steps were never zeroed;
- validation: a forward pass without gradients (``torch.no_grad``) or in eval mode is a validation pass; the
  rows it sees are looked up in the splits, and its mode is kept.

That record lives in the learner's process, where the learner's code could rewrite it: it only words the
messages. The points come from the returned parameters of short ``probe`` runs whose right result the grader
computes on its side from the initial weights alone (``attnlib.grading.loop_probes``): one step of plain SGD
(its direction is the gradient of the loop's loss; with a clip far below the gradient's norm, its norm is
lr · clip), and a run whose optimizer sets the weights to waypoints of known validation loss (when the loop
stops, which weights it keeps, the validation losses it reports).

The measures the grader takes of the main run's parameters (``evaluate``) and their thresholds
(``THRESHOLDS``) come from ``benchmarks/loop_thresholds.py``.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

import torch
from torch import nn

from attnlib.data.batching import Pair, build_task, make_batches
from attnlib.data.dates import dates_task, render
from attnlib.data.vocab import EOS_ID, PAD_ID, SOS_ID
from attnlib.masking import lengths_to_mask

TASK = {"n_train": 640, "n_valid": 160, "n_test": 400, "seed": 0}  # dates_task's slice
TARGET_FORMAT = "d month yyyy"  # the targets, written out: "3 march 2019"
SIZES = {"emb": 16, "hidden": 32, "attn": 32}  # chapter 4's Bahdanau model, smaller
BUDGET = {"batch_size": 64, "lr": 0.02, "max_epochs": 6, "patience": 2, "clip": 0.2}
# What the hidden tests ask of the trained model on the 400 held-out dates (exact match at least, loss per
# token at most): between the worst of 20 seeds of a correct loop (0.285, 0.269) and the best of 20 of a loop
# that never zeroes its gradients (0.070, 0.432); a loop whose target is its input: 0 and 12
# (benchmarks/loop_thresholds.py).
THRESHOLDS = {"exact_match": 0.15, "test_loss": 0.35}


@lru_cache(maxsize=1)
def task():
    """The dates slice with written-out targets (fixed data: seeds draw the weights only)."""
    iso = dates_task(**TASK)

    def written(pairs: list[Pair]) -> list[Pair]:
        return [Pair(p.src, list(render(date.fromisoformat("".join(p.tgt)), TARGET_FORMAT))) for p in pairs]

    return build_task((written(iso.train), written(iso.valid), written(iso.test)))


def batches(pairs: list[Pair], batch_size: int | None = None) -> list[tuple[torch.Tensor, ...]]:
    """``(src, src_lengths, tgt)`` batches in the given order, tgt = <sos> y <eos> padded with 0."""
    t = task()
    out = []
    for b in make_batches(pairs, t.src_vocab, t.tgt_vocab, batch_size or BUDGET["batch_size"]):
        tgt = torch.cat([torch.full_like(b.tgt_out[:, :1], SOS_ID), b.tgt_out], dim=1)  # (B, T + 2)
        out.append((b.src, b.src_lengths, tgt))
    return out


def _key(row: torch.Tensor, length: int) -> tuple[int, ...]:
    return tuple(int(x) for x in row[:length].tolist())


SPLITS = ("train", "valid", "test", "unknown")


@lru_cache(maxsize=1)
def _targets() -> dict[tuple[int, ...], tuple[str, list[int]]]:
    """source ids -> (its split, its full target ids <sos> y <eos>)."""
    t = task()
    return {
        tuple(t.src_vocab.encode(p.src)): (split, [SOS_ID, *t.tgt_vocab.encode(p.tgt), EOS_ID])
        for split in ("train", "valid", "test")
        for p in getattr(t, split)
    }


def _padded(ids: list[int], n: int) -> list[int]:
    return (ids + [PAD_ID] * n)[:n]


def _flat(tensors: list[torch.Tensor]) -> torch.Tensor:
    return torch.cat([x.reshape(-1) for x in tensors]) if tensors else torch.zeros(1)


class Recorder:
    """What the learner's loop did to the model and the optimizer (see the module's docstring): its epochs
    (the training steps and the rows trained on before each validation pass), its validation passes (rows and
    mode) and the positions its loss reached."""

    def __init__(self) -> None:
        self.epochs, self.passes, self.validating = [], [], False
        self.current = {"steps": [], "rows": dict.fromkeys(SPLITS, 0)}
        self.loss = dict.fromkeys(
            ("real", "in_loss", "right_target", "pad_in_loss", "inputs", "inputs_right"), 0
        )
        self.pending: dict[str, torch.Tensor] = {}  # parameter -> its gradient since the last step

    def forward(self, model: LoopModel, src, src_lengths, tgt_in, logits) -> None:
        rows = [_targets().get(_key(src[b], int(src_lengths[b])), ("unknown", None)) for b in range(len(src))]
        grad = torch.is_grad_enabled()
        if not grad or not model.training:  # a validation pass: it closes the epoch
            if not self.validating:
                self.epochs.append(self.current)
                self.current = {"steps": [], "rows": dict.fromkeys(SPLITS, 0)}
                self.passes.append({"rows": dict.fromkeys(SPLITS, 0), "no_grad": True, "eval": True})
                self.validating = True
            run = self.passes[-1]
            run["no_grad"], run["eval"] = run["no_grad"] and not grad, run["eval"] and not model.training
        else:
            self.validating, run = False, self.current
            if logits.requires_grad:
                logits.register_hook(lambda g: self._loss_targets(g, tgt_in, rows))
        for split, _ in rows:
            run["rows"][split] += 1

    def _loss_targets(self, g: torch.Tensor, tgt_in: torch.Tensor, rows) -> None:
        """Which positions the loss covers, with which target, from its gradient g (B, T, V)."""
        known = [b for b, (_, full) in enumerate(rows) if full is not None]
        if not known:
            return
        truth = torch.tensor([_padded(rows[b][1][1:], g.shape[1]) for b in known])  # y_1 … <eos> pad: (B', T)
        inputs = torch.tensor([_padded(rows[b][1], tgt_in.shape[1]) for b in known])  # <sos> y_1 … (B', T_in)
        g, given = g[known].detach().cpu(), tgt_in[known].detach().cpu()
        in_loss, used, real, fed = (g != 0).any(dim=-1), g.argmin(dim=-1), truth != PAD_ID, inputs != PAD_ID
        for key, count in (
            ("inputs", fed),
            ("inputs_right", fed & (given == inputs)),
            ("real", real),
            ("in_loss", in_loss & real),
            ("right_target", in_loss & real & (used == truth)),
            ("pad_in_loss", in_loss & ~real),
        ):
            self.loss[key] += int(count.sum())

    def step(self, params: dict[str, nn.Parameter]) -> None:
        """Before the optimizer's step: the gradient g of the backward passes since the last step, and a, the
        one the step applies (a = g · min(1, c / ‖g‖) when the loop clips to c)."""
        names = [n for n in params if n in self.pending]
        g = _flat([self.pending[n] for n in names])
        a = _flat([params[n].grad if params[n].grad is not None else 0 * self.pending[n] for n in names])
        gg = float(g @ g)
        scale = float(a @ g) / gg if gg > 0 else 0.0
        residual = float((a - scale * g).norm()) / max(float(a.norm()), 1e-12)  # 0 when a is a multiple of g
        self.current["steps"].append(
            {"raw": gg**0.5, "applied": float(a.norm()), "scale": scale, "residual": residual}
        )
        self.pending.clear()
        self.validating = False

    def summary(self) -> dict[str, Any]:
        return {"epochs": self.epochs, "valid_passes": self.passes, "loss": dict(self.loss)}


class LoopModel(nn.Module):
    """``model(src, src_lengths, tgt_in) -> logits (B, T, V)``: chapter 4's Bahdanau model, teacher-forced."""

    def __init__(self, net: nn.Module, recorder: Recorder | None = None) -> None:
        super().__init__()
        self.net, self.recorder = net, recorder
        if recorder is not None:
            for name, p in net.named_parameters():
                p.register_hook(lambda g, name=name: self._pending(name, g))

    def _pending(self, name: str, g: torch.Tensor) -> None:
        pending = self.recorder.pending
        pending[name] = g.detach().clone() if name not in pending else pending[name] + g.detach()

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        batch = SimpleNamespace(
            src=src,
            src_lengths=src_lengths,
            tgt_in=tgt_in,
            src_mask=lengths_to_mask(src_lengths, src.shape[1]),
        )
        logits, _ = self.net(batch)  # (B, T, V)
        if self.recorder is not None:
            self.recorder.forward(self, src, src_lengths, tgt_in, logits)
        return logits


def build(seed: int = 0, dropout: float = 0.0) -> nn.Module:
    """The Seq2Seq network (no recording), its initial weights drawn from ``seed``, on the CPU (dropout draws
    no weights: the same seed gives the same weights with or without it)."""
    from attnlib.seq2seq import build_model

    t = task()
    torch.manual_seed(seed)
    return build_model("bahdanau", t.src_vocab, t.tgt_vocab, device="cpu", dropout=dropout, **SIZES)


def loss_sum(logits: torch.Tensor, tgt: torch.Tensor, kind: str = "right") -> tuple[torch.Tensor, int]:
    """The cross-entropy of ``logits`` (B, T + 1, V) against ``tgt`` (B, T + 2) summed over the positions the
    loss ``kind`` covers, and their number: right (next tokens, padding skipped), padding (counted),
    own_input (the input as its own target), no_eos (the end token skipped)."""
    target = tgt[:, :-1] if kind == "own_input" else tgt[:, 1:]  # (B, T + 1)
    if kind == "no_eos":
        target = target.masked_fill(target == EOS_ID, PAD_ID)
    keep = torch.ones_like(target, dtype=torch.bool) if kind == "padding" else target != PAD_ID
    nll = -torch.log_softmax(logits.double(), dim=-1).gather(-1, target[..., None])[..., 0]  # (B, T + 1)
    return nll[keep].sum(), int(keep.sum())


@torch.no_grad()
def valid_loss(net: nn.Module, data: list[tuple[torch.Tensor, ...]]) -> float:
    """Masked cross-entropy per real target token (y and <eos>) of ``net`` on ``data``, in eval mode."""
    was = net.training
    net.eval()
    total, count = 0.0, 0
    for src, src_lengths, tgt in data:
        batch = SimpleNamespace(
            src=src,
            src_lengths=src_lengths,
            tgt_in=tgt[:, :-1],
            src_mask=lengths_to_mask(src_lengths, src.shape[1]),
        )
        logits, _ = net(batch)
        summed, tokens = loss_sum(logits, tgt)
        total, count = total + float(summed), count + tokens
    net.train(was)
    return total / max(count, 1)


def run(train_loop: Any, seed: int = 0, probe: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build the model (weights of ``seed``), the optimizer and the batches, call ``train_loop`` on them (one
    thread), and return plain data: the trained parameters, the loop's history and what it did. ``probe``: one
    of the short runs of ``attnlib.grading.loop_probes`` instead of the main one."""
    t = task()
    if probe is None:
        net, train_b, valid_b = build(seed), batches(t.train), batches(t.valid)
        max_epochs, patience, clip = BUDGET["max_epochs"], BUDGET["patience"], BUDGET["clip"]
        make_optimizer = lambda parameters: torch.optim.Adam(parameters, lr=BUDGET["lr"])  # noqa: E731
    else:
        from attnlib.grading import loop_probes

        net, train_b, valid_b, max_epochs, patience, clip, make_optimizer = loop_probes.setup(probe, seed)
    recorder = Recorder()
    model = LoopModel(net, recorder)
    params = dict(model.net.named_parameters())
    optimizer = make_optimizer(list(model.parameters()))
    optimizer.register_step_pre_hook(lambda opt, args, kwargs: recorder.step(params))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        history = train_loop(model, optimizer, train_b, valid_b, max_epochs, patience, clip)
    finally:
        torch.set_num_threads(threads)
    parameters = {k: v.detach().clone() for k, v in model.net.state_dict().items()}
    return {"parameters": parameters, "history": history, "record": recorder.summary()}


def load(parameters: dict[str, torch.Tensor]) -> nn.Module:
    net = build()
    net.load_state_dict(parameters)
    return net.eval()


@torch.no_grad()
def evaluate(net: nn.Module) -> dict[str, float]:
    """On the held-out test split: exact match of greedy decoding and the masked loss per token; and the
    masked validation loss."""
    from attnlib.metrics import exact_match
    from attnlib.seq2seq.decoding import greedy

    t = task()
    test = batches(t.test, len(t.test))
    src, src_lengths, tgt = test[0]
    hyps = greedy(net, src, src_lengths, max_len=tgt.shape[1]).tokens
    refs = [t.tgt_vocab.encode(p.tgt) for p in t.test]
    return {
        "exact_match": exact_match(hyps, refs),
        "test_loss": valid_loss(net, test),
        "valid_loss": valid_loss(net, batches(t.valid)),
    }

"""A sequence classifier for chapter 1's recall experiment: read the sequence, classify its last state.

    h_t = RNN(E x_t, h_{t-1}),   p(y | x) = softmax(W h_T + b)        (RNN: tanh; or a GRU, or an LSTM)

Training is ``attnlib.train.train`` with the cross-entropy of the class as its objective; the data is
``attnlib.data.recall_task``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from attnlib import _checks
from attnlib.modes import evaluating
from attnlib.train import train

Tensor = torch.Tensor


class RecallClassifier(nn.Module):
    """Embedding -> one-layer RNN (tanh) / GRU / LSTM -> linear read-out of the last hidden state h_T."""

    def __init__(
        self, kind: Literal["rnn", "gru", "lstm"], vocab_size: int, n_classes: int, hidden: int = 32
    ):
        super().__init__()
        layers = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}
        if kind not in layers:
            raise ValueError(f"kind must be one of {sorted(layers)}, got {kind!r}")
        self.embed = nn.Embedding(vocab_size, hidden)
        self.rnn = layers[kind](hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, tokens: Tensor) -> Tensor:
        states, _ = self.rnn(self.embed(tokens))  # (B, T, hidden)
        return self.out(states[:, -1])  # (B, n_classes)


@dataclass
class Examples:
    """A minibatch of sequences ``tokens (B, T)`` and their classes ``labels (B,)``."""

    tokens: Tensor
    labels: Tensor

    def to(self, device: torch.device | str) -> Examples:
        return Examples(self.tokens.to(device), self.labels.to(device))


def cross_entropy(model: nn.Module, batch: Examples) -> Tensor:
    """The classification objective: mean cross-entropy of the true classes."""
    return F.cross_entropy(model(batch.tokens), batch.labels)


def train_classifier(
    model: nn.Module,
    tokens: Tensor,
    labels: Tensor,
    steps: int = 200,
    batch_size: int = 64,
    lr: float = 1e-2,
    clip: float | None = 1.0,
    seed: int = 0,
) -> list[float]:
    """``train`` with Adam at a constant ``lr`` on minibatches drawn at random (with replacement, seeded by
    ``seed``), gradient norm clipped at ``clip``; returns the loss of every step."""
    steps, g = _checks.positive_int(steps, "steps"), torch.Generator().manual_seed(seed)
    draws = [torch.randint(len(labels), (batch_size,), generator=g) for _ in range(steps)]
    batches = [Examples(tokens[i], labels[i]) for i in draws]
    history = train(
        model,
        lambda epoch: batches,  # one "epoch" of exactly `steps` minibatches
        steps=steps,
        lr=lr,
        clip=clip,
        schedule="constant",
        seed=None,  # the draws above are seeded; the caller's global RNG is left alone
        log_every=1,
        progress=False,
        objective=cross_entropy,
    )
    return history.train_loss


def accuracy(model: nn.Module, tokens: Tensor, labels: Tensor) -> float:
    """Fraction of ``labels`` the classifier predicts (argmax), in eval mode."""
    with torch.no_grad(), evaluating(model):
        return float((model(tokens).argmax(-1) == labels).float().mean())

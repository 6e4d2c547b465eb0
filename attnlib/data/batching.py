"""Pairs, splits and padded batches: what every seq2seq lesson feeds its model.

A :class:`Pair` is one example, source tokens x_1 … x_S, target tokens y_1 … y_T, and optionally its gold
word alignment as a set of links (t, s), both 0-based over the real tokens (no <sos>/<eos>), so that link
(t, s) says "target token y_{t+1} translates source token x_{s+1}" and can be compared with the attention
weight alpha_{t,s} the decoder computes when it predicts that token.

A :class:`Batch` pads B pairs into a rectangle (batch-first, pad id 0) with what the model and the loss need:

    src      (B, S)  x_1 … x_S, padded
    tgt_in   (B, T)  <sos> y_1 … y_{T-1}   the decoder's inputs (teacher forcing)
    tgt_out  (B, T)  y_1 … y_{T-1} <eos>   what it must predict at each step: tgt_in shifted left by one

so tgt_out[:, t] is the target of the step whose input is tgt_in[:, t]. Sorting examples of similar length
into the same batch (``bucket=True``) keeps padding, and so wasted computation, small.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from attnlib.data.vocab import EOS_ID, PAD_ID, SOS_ID, Vocab

if TYPE_CHECKING:  # torch is imported only when a batch is actually built
    import torch

Link = tuple[int, int]  # (target index t, source index s), 0-based over real tokens


@dataclass(frozen=True)
class Pair:
    """One example: source tokens, target tokens, and the gold alignment links (t, s) if known."""

    src: list[str]
    tgt: list[str]
    alignment: frozenset[Link] | None = None


@dataclass(frozen=True)
class Task:
    """A ready-to-train task: three disjoint splits and the vocabularies built from the training split."""

    train: list[Pair]
    valid: list[Pair]
    test: list[Pair]
    src_vocab: Vocab
    tgt_vocab: Vocab


@dataclass
class Batch:
    """B padded examples. Masks are bool with True = real token, as attnlib's attention masks."""

    src: torch.Tensor  # (B, S) long, padded with 0
    src_lengths: torch.Tensor  # (B,) long, number of real source tokens
    src_mask: torch.Tensor  # (B, S) bool, True = real token (a padding mask usable by attnlib.attend)
    tgt_in: torch.Tensor  # (B, T) long, <sos> y_1 … y_{T-1}
    tgt_out: torch.Tensor  # (B, T) long, y_1 … y_{T-1} <eos>
    tgt_mask: torch.Tensor  # (B, T) bool, True where tgt_out is a real target (the words and <eos>)
    examples: list[Pair] = field(repr=False)  # the raw pairs, in batch order, for evaluation and plots
    alignment: torch.Tensor | None = None  # (B, T, S) bool gold links, if every example has them

    def __len__(self) -> int:
        return len(self.examples)

    def to(self, device: torch.device | str) -> Batch:
        """The same batch with every tensor on ``device``."""
        moved = {
            name: getattr(self, name).to(device)
            for name in ("src", "src_lengths", "src_mask", "tgt_in", "tgt_out", "tgt_mask")
        }
        alignment = None if self.alignment is None else self.alignment.to(device)
        return replace(self, **moved, alignment=alignment)


def collate(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab) -> Batch:
    """Encode and pad ``pairs`` (in the given order) into one :class:`Batch`."""
    import torch

    from attnlib.masking import lengths_to_mask

    if not pairs:
        raise ValueError("collate needs at least one pair, got 0")
    src_ids = [src_vocab.encode(p.src) for p in pairs]
    tgt_ids = [tgt_vocab.encode(p.tgt) for p in pairs]
    B, S, T = len(pairs), max(map(len, src_ids)), max(map(len, tgt_ids)) + 1  # +1 for <sos> / <eos>

    def padded(rows: list[list[int]], width: int) -> torch.Tensor:  # one tensor from padded lists, not B
        return torch.tensor([row + [PAD_ID] * (width - len(row)) for row in rows], dtype=torch.long)

    src = padded(src_ids, S)  # (B, S)
    tgt_in = padded([[SOS_ID, *y] for y in tgt_ids], T)  # (B, T)
    tgt_out = padded([[*y, EOS_ID] for y in tgt_ids], T)  # (B, T)
    src_lengths = torch.tensor([len(x) for x in src_ids], dtype=torch.long)
    tgt_lengths = torch.tensor([len(y) + 1 for y in tgt_ids], dtype=torch.long)
    alignment = None
    if all(p.alignment is not None for p in pairs):
        alignment = torch.zeros(B, T, S, dtype=torch.bool)
        links = [(b, t, s) for b, p in enumerate(pairs) for t, s in p.alignment]  # one write, not one a link
        if links:
            alignment[tuple(torch.tensor(links, dtype=torch.long).T)] = True
    return Batch(
        src=src,
        src_lengths=src_lengths,
        src_mask=lengths_to_mask(src_lengths, S),  # (B, S)
        tgt_in=tgt_in,
        tgt_out=tgt_out,
        tgt_mask=lengths_to_mask(tgt_lengths, T),  # (B, T)
        examples=list(pairs),
        alignment=alignment,
    )


def make_batches(
    pairs: Sequence[Pair],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    batch_size: int,
    *,
    shuffle: bool = False,
    seed: int = 0,
    bucket: bool = False,
    bucket_factor: int = 50,
    drop_last: bool = False,
) -> list[Batch]:
    """Cut ``pairs`` into padded batches of ``batch_size``.

    Args:
        shuffle: shuffle the examples with ``random.Random(seed)``; pass the epoch number as ``seed`` to get
            a new, reproducible order each epoch.
        bucket: sort the examples by source length (then target length) inside chunks of
            ``batch_size * bucket_factor`` so that each batch holds sequences of similar length; with
            ``shuffle`` the chunks and the order of the resulting batches are random.
        drop_last: drop a final batch smaller than ``batch_size``.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    if shuffle:
        rng.shuffle(order)
    if bucket:
        chunk = batch_size * bucket_factor
        order = [
            i
            for start in range(0, len(order), chunk)
            for i in sorted(
                order[start : start + chunk], key=lambda i: (len(pairs[i].src), len(pairs[i].tgt))
            )
        ]
    groups = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    if drop_last and groups and len(groups[-1]) < batch_size:
        groups.pop()
    if shuffle and bucket:
        rng.shuffle(groups)  # otherwise every epoch would go from short to long sequences
    return [collate([pairs[i] for i in group], src_vocab, tgt_vocab) for group in groups]


def split(
    pairs: Sequence[Pair], fractions: Sequence[float] = (0.8, 0.1, 0.1), seed: int = 0
) -> tuple[list[Pair], ...]:
    """Split ``pairs`` at random into ``len(fractions)`` parts that share no source sentence.

    Exact duplicates (same source and target) are dropped first. Pairs that share a source but differ in the
    target (Tatoeba has several translations of "go .") stay together in one part: otherwise a test sentence
    would have been seen in training, and test scores would measure memory, not generalisation. Because
    whole groups are assigned, part sizes follow ``fractions`` up to the size of a group.
    """
    if any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-6:
        raise ValueError(f"fractions must be >= 0 and sum to 1, got {tuple(fractions)}")
    groups: dict[tuple[str, ...], list[Pair]] = {}
    seen: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    for pair in pairs:
        key = (tuple(pair.src), tuple(pair.tgt))
        if key not in seen:
            seen.add(key)
            groups.setdefault(key[0], []).append(pair)
    sources = list(groups)  # first-appearance order, so the result depends on the seed only
    random.Random(seed).shuffle(sources)
    parts: list[list[Pair]] = []
    start, assigned, cumulative = 0, 0, 0.0
    for fraction in fractions:
        cumulative += fraction
        goal = len(seen) if len(parts) == len(fractions) - 1 else round(cumulative * len(seen))
        part: list[Pair] = []
        while start < len(sources) and assigned < goal:
            part.extend(groups[sources[start]])
            assigned += len(groups[sources[start]])
            start += 1
        parts.append(part)
    return tuple(parts)


def build_task(parts: Sequence[Sequence[Pair]]) -> Task:
    """A :class:`Task` from (train, valid, test), with vocabularies built from the training pairs only.

    Tokens that occur only in validation or test become <unk>, exactly as they would for unseen data.
    """
    train, valid, test = (list(p) for p in parts)
    return Task(
        train=train,
        valid=valid,
        test=test,
        src_vocab=Vocab.build(p.src for p in train),
        tgt_vocab=Vocab.build(p.tgt for p in train),
    )

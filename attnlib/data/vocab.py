"""Vocabulary: the table between tokens (strings) and the integer ids a model embeds.

Every model in the course reads ids, every plot and metric reads tokens, so one small class does both
directions. Four special tokens come first, at fixed ids, so that code can rely on them without a vocab
at hand (the batching module pads with 0, a decoder starts from 1 and stops at 2):

    <pad> = 0   padding to the batch's longest sequence; masked out of attention and loss
    <sos> = 1   start of sequence, fed to the decoder at step t = 1 (y_0)
    <eos> = 2   end of sequence, the decoder's last target; decoding stops here
    <unk> = 3   any token not seen when the vocabulary was built

The regular tokens follow in sorted order, so the same corpus always gives the same ids (a dict's insertion
order or a set's iteration order would depend on how the corpus was shuffled).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

PAD, SOS, EOS, UNK = "<pad>", "<sos>", "<eos>", "<unk>"
SPECIALS: tuple[str, ...] = (PAD, SOS, EOS, UNK)
PAD_ID, SOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3


class Vocab:
    """Token <-> id mapping with the four specials at ids 0-3 and the other tokens sorted after them."""

    def __init__(self, tokens: Iterable[str] = ()) -> None:
        """Make a vocabulary of the specials followed by ``tokens`` in the given order (duplicates dropped).

        Use :meth:`build` to make one from a corpus; this constructor keeps the order it is given, which is
        what :meth:`from_dict` needs to restore saved ids exactly.
        """
        self.stoi: dict[str, int] = {token: i for i, token in enumerate(SPECIALS)}
        for token in tokens:
            self.stoi.setdefault(token, len(self.stoi))  # a dict lookup, not a scan of the list: linear
        self.itos: list[str] = list(self.stoi)

    @classmethod
    def build(cls, sequences: Iterable[Sequence[str]], min_count: int = 1) -> Vocab:
        """Vocabulary of every token that occurs at least ``min_count`` times in ``sequences``, sorted."""
        counts = Counter(token for sequence in sequences for token in sequence)
        return cls(sorted(token for token, count in counts.items() if count >= min_count))

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: object) -> bool:
        return token in self.stoi

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {self.itos[4:12]}{' ...' if len(self) > 12 else ''})"

    def id(self, token: str) -> int:
        """The id of ``token``, or the id of <unk> for a token not in the vocabulary."""
        return self.stoi.get(token, UNK_ID)

    def encode(self, tokens: Sequence[str], sos: bool = False, eos: bool = False) -> list[int]:
        """Ids of ``tokens``, optionally framed by <sos> and <eos>."""
        ids = [self.id(token) for token in tokens]
        return ([SOS_ID] if sos else []) + ids + ([EOS_ID] if eos else [])

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens of ``ids`` up to the first <eos>, without <pad> and <sos>.

        This is how a decoder's output is read: everything after <eos> is whatever the model emitted once it
        was done, and padding is not part of any sentence. <unk> is kept, it is a real prediction.
        """
        tokens = []
        for i in ids:
            i = int(i)  # also accepts 0-d tensors and numpy integers
            if i == EOS_ID:
                break
            if i not in (PAD_ID, SOS_ID):
                tokens.append(self.itos[i])
        return tokens

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able description from which :meth:`from_dict` rebuilds the same ids."""
        return {"specials": list(SPECIALS), "tokens": self.itos[len(SPECIALS) :]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Vocab:
        """Inverse of :meth:`to_dict`. Refuses a dict saved with other specials (its ids would shift)."""
        if list(data.get("specials", [])) != list(SPECIALS):
            raise ValueError(f"vocab dict has specials {data.get('specials')!r}, expected {list(SPECIALS)!r}")
        return cls(data["tokens"])

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_dict` as UTF-8 JSON (accents and ¿ kept readable)."""
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Vocab:
        """Read a vocabulary written by :meth:`save`."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

"""Reading alignment maps (chapter 8): crossings, a compression task, sentence features, perturbed attention.

    crossings(links)          pairs of links (t, s), (t', s') with t < t' but s > s': reordering
    compression_pair(pair)    "he reads the new books" -> "he reads new books" (function words dropped)
    adjective_crossing(pair)  the gold crossing of an adjective and the noun it precedes, if any
    features(pair)            construction, verb and length of a toy translation pair, for an error analysis
    perturbed_attention(...)  decode with the weights alpha_t replaced (uniform, permuted, one-hot): how
                              much does the output depend on them? (Jain & Wallace 2019, §4)

The functions read the toy corpus's gold alignments (``attnlib.data.translation``) where they need them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

import torch

from attnlib.data.batching import Link, Pair
from attnlib.data.lexicon import ADJECTIVES
from attnlib.masking import weighted_sum

# English words that carry grammar rather than content in the toy corpus (articles, auxiliaries,
# prepositions). "not" and "still" stay: dropping them would change the meaning.
FUNCTION_WORDS = frozenset({"the", "a", "an", "some", "am", "is", "are", "do", "does", "at", "in"})
MODES = ("uniform", "permuted", "hard")
_ADJECTIVES = frozenset(a.en for a in ADJECTIVES)
_BE = frozenset({"am", "is", "are"})


def crossings(links: Iterable[Link]) -> list[tuple[Link, Link]]:
    """Every pair of links ``(t, s), (t2, s2)`` with ``t < t2`` and ``s > s2``: the two target words come
    in the opposite order of their source words ("the red house" -> "la casa roja")."""
    ordered = sorted(set(links))
    return [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :] if a[0] < b[0] and a[1] > b[1]]


def compression_pair(pair: Pair, function_words: frozenset[str] = FUNCTION_WORDS) -> Pair:
    """A sentence-compression example from the ENGLISH side of ``pair``: the target keeps the content
    words, in order; the gold alignment links each kept word to its source position (a monotone copy)."""
    kept = [s for s, word in enumerate(pair.src) if word not in function_words]
    return Pair(
        src=list(pair.src),
        tgt=[pair.src[s] for s in kept],
        alignment=frozenset((t, s) for t, s in enumerate(kept)),
    )


def adjective_crossing(pair: Pair) -> tuple[Link, Link] | None:
    """The gold crossing ``((t_noun, s_noun), (t_adj, s_adj))`` of an English adjective and the noun right
    after it ("the red car" -> "el coche rojo"), or None (no such pair, or no gold alignment)."""
    for a, b in crossings(pair.alignment or ()):
        if a[1] == b[1] + 1 and pair.src[b[1]] in _ADJECTIVES:
            return a, b
    return None


def features(pair: Pair) -> dict[str, object]:
    """Construction, verb and length of a toy translation pair.

    ``construction`` is the first that applies of: "question" (the Spanish starts with "¿"), "negation"
    ("not" in the English), "adjective + noun" (an adjective before its noun, reordered in Spanish: see
    :func:`adjective_crossing`), and "plain". ``verb`` is "be" (am / is / are: Spanish must choose ser or
    estar) or "other".
    """
    if pair.tgt and pair.tgt[0] == "¿":
        construction = "question"
    elif "not" in pair.src:
        construction = "negation"
    elif adjective_crossing(pair) is not None:
        construction = "adjective + noun"
    else:
        construction = "plain"
    return {
        "construction": construction,
        "verb": "be" if _BE & set(pair.src) else "other",
        "source length": len(pair.src),
    }


def _replace(
    weights: torch.Tensor, mask: torch.Tensor, mode: str, generator: torch.Generator
) -> torch.Tensor:
    """New weights ``(B, T, S)`` over the real source positions of ``mask (B, S)``."""
    real = mask[:, None, :].expand_as(weights)  # (B, T, S)
    if mode == "uniform":
        new = real.to(weights.dtype)
        return new / new.sum(dim=-1, keepdim=True)
    if mode == "hard":
        return torch.nn.functional.one_hot(weights.argmax(dim=-1), weights.shape[-1]).to(weights.dtype)
    new = torch.zeros_like(weights)
    for b in range(weights.shape[0]):  # permute the weights among the real positions of each sentence
        S_b = int(mask[b].sum())
        for t in range(weights.shape[1]):
            order = torch.randperm(S_b, generator=generator)
            new[b, t, :S_b] = weights[b, t, :S_b][order]
    return new


@contextlib.contextmanager
def perturbed_attention(decoder: torch.nn.Module, mode: str, seed: int = 0) -> Iterator[None]:
    """Inside the ``with`` block, ``decoder`` computes alpha_t as usual, then REPLACES it before taking the
    context c_t = Hᵀ alpha_t:

        "uniform"   alpha_{t,s} = 1/S over the real source positions
        "permuted"  the same weights, shuffled among the real positions (seeded): same peakedness, new places
        "hard"      a one-hot on argmax_s alpha_{t,s}: only the strongest link is kept

    Works with decoders whose steps call ``self.attention(query, H, mask, ...) -> (context, weights)``
    (``LuongDecoder``). The weights the decoder returns are the replaced ones.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    original = decoder.attention
    generator = torch.Generator().manual_seed(seed)

    def attention(query, H, src_mask, *args, **kwargs):
        _, weights = original(query, H, src_mask, *args, **kwargs)  # (B, T, S)
        new = _replace(weights, src_mask, mode, generator)
        return weighted_sum(new, H), new  # c_t = Hᵀ alpha_t: (B, T, d_h)

    decoder.attention = attention  # an instance attribute shadows the method
    try:
        yield
    finally:
        del decoder.attention

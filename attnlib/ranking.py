"""The course's one rule for ranking trained variants: seeds, the test sample, and how many pairs are ranked.

A trained model is one draw: of its initial weights and batch order (the seed) and of the test sentences it is
scored on (the test sample). "A is better than B" is a statement about the variants, not about those draws, so
A ranks above B only when all three hold:

1. **Seeds.** A's worst seed beats B's best seed (their ranges over the seeds do not overlap).
2. **Enough seeds for the family.** Two identical variants fail to overlap by chance with probability
   2 / C(n_A + n_B, n_A) (all n_A + n_B results exchangeable; either one above): 0.10 for 3 against 3 seeds,
   0.029 for 4 against 4, 0.0079 for 5 against 5, 0.0022 for 6 against 6. When a table ranks ``pairs`` pairs,
   that chance times ``pairs`` must stay within ``ALPHA`` = 5% (Bonferroni), so 3 seeds never rank, 4 rank one
   pair, 5 rank up to 6 pairs and 6 up to 23. A design with too few seeds for its family cannot rank and
   cannot claim a tie either (a tie it could never break says nothing): it raises ``ValueError``.
3. **The test sample.** Scores measured on a test set are given per test item (``TestScores``). On
   ``RESAMPLES`` bootstrap resamples of the test items (the same resample for every variant and seed: they
   were scored on the same items), A's worst seed must still beat B's best seed in at least 1 - ALPHA / pairs
   of them. A gap smaller than the test set's own sampling noise does not rank.

A result with no test sample (a training loss, a gradient norm on a fixed batch) is given as a plain float,
and only rules 1 and 2 apply to it. ``claim_ranked``/``claim_tied`` in :mod:`attnlib.notebook` state claims
with this rule; ``rank_table`` ranks every pair of a table, the family being all of its pairs.

References: B. Efron, R. Tibshirani (1993), *An Introduction to the Bootstrap* (the bootstrap); P. Koehn
(2004), Statistical significance tests for machine translation evaluation, EMNLP (paired bootstrap resampling
of the test sentences, for BLEU).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05  # family-wise error the course accepts for one table (or section) of rankings
RESAMPLES = 2000  # bootstrap resamples of the test items
_BOOTSTRAP_SEED = 0  # one fixed generator: the verdict of a run is reproducible


def _ratio(sums: np.ndarray) -> np.ndarray:
    return sums[..., 0] / np.maximum(sums[..., 1], 1e-300)


def _aer(sums: np.ndarray) -> np.ndarray:
    hit_s, hit_p, n_a, n_s = (sums[..., i] for i in range(4))
    denominator = n_a + n_s
    return np.where(denominator > 0, 1.0 - (hit_s + hit_p) / np.maximum(denominator, 1e-300), 0.0)


def _bleu(sums: np.ndarray) -> np.ndarray:
    """Corpus BLEU from summed statistics [sys_len, ref_len, correct_1..4, total_1..4], as sacrebleu's
    ``BLEU.compute_bleu(..., smooth_method="exp")`` computes it (Post 2018; NIST's exponential smoothing of
    orders with no match), operation for operation, for many resamples at once (the bootstrap asks for
    thousands; sacrebleu's one-at-a-time call made a 21-pair table take minutes)."""
    rows = np.rint(sums.reshape(-1, sums.shape[-1]))
    sys_len, ref_len, correct, total = rows[:, 0], rows[:, 1], rows[:, 2:6], rows[:, 6:10]
    short = sys_len < ref_len  # brevity penalty exp(1 - r/c), 0 for an empty output
    bp = [
        (math.exp(1 - r / c) if c > 0 else 0.0) if s else 1.0
        for s, r, c in zip(short.tolist(), ref_len.tolist(), sys_len.tolist(), strict=True)
    ]
    precisions = np.zeros_like(correct)
    smooth = np.ones(len(rows))
    alive = np.ones(len(rows), dtype=bool)  # sacrebleu stops at the first order with no n-gram at all
    for n in range(4):
        alive &= total[:, n] > 0
        missed = alive & (correct[:, n] == 0)
        smooth = np.where(missed, smooth * 2, smooth)
        hit = alive & ~missed
        safe_total = np.where(alive, total[:, n], 1.0)
        precisions[:, n] = np.where(hit, 100.0 * correct[:, n] / safe_total, 0.0)
        precisions[:, n] = np.where(missed, 100.0 / (smooth * safe_total), precisions[:, n])
    scores = []
    for b, p, any_match in zip(bp, precisions.tolist(), (correct > 0).any(axis=1).tolist(), strict=True):
        if not any_match:
            scores.append(0.0)
            continue
        logs = sum([math.log(x) if x != 0.0 else -9999999999 for x in p])  # sacrebleu's my_log
        scores.append(b * math.exp(logs / 4))
    return np.asarray(scores, dtype=np.float64).reshape(sums.shape[:-1])


def _bleu_one_at_a_time(sums: np.ndarray) -> np.ndarray:
    """The same through sacrebleu itself, one row at a time: the reference the fast path is tested against."""
    from sacrebleu.metrics.bleu import BLEU

    rows = sums.reshape(-1, sums.shape[-1])
    out = [
        BLEU.compute_bleu(
            correct=[int(round(c)) for c in row[2:6]],
            total=[int(round(t)) for t in row[6:10]],
            sys_len=int(round(row[0])),
            ref_len=int(round(row[1])),
            smooth_method="exp",
        ).score
        for row in rows
    ]
    return np.asarray(out, dtype=np.float64).reshape(sums.shape[:-1])


# statistic of the column sums of a seed's per-item rows; named, so that results pickle across processes
STATISTICS = {"ratio": _ratio, "aer": _aer, "bleu": _bleu}


@dataclass(frozen=True)
class TestScores:
    """One seed's result on a test set, kept per test item so that the test sample's noise can be measured.

    ``items`` is ``(N, k)``: per test item, the ``k`` numbers whose column sums give the result through the
    named ``statistic`` (``"ratio"``: sum of column 0 / sum of column 1; ``"aer"``; ``"bleu"``).
    ``float(scores)`` is the result on the whole test set.
    """

    __test__ = False  # not a pytest test class, whatever its name says

    items: np.ndarray
    statistic: str = "ratio"

    def __post_init__(self):
        items = np.asarray(self.items, dtype=np.float64)
        if items.ndim != 2 or items.shape[0] == 0:
            raise ValueError(f"items must be (N, k) with N >= 1 test items, got shape {items.shape}")
        if not np.isfinite(items).all():
            raise ValueError("items contain NaN or infinity")
        if self.statistic not in STATISTICS:
            raise ValueError(f"statistic must be one of {sorted(STATISTICS)}, got {self.statistic!r}")
        object.__setattr__(self, "items", items)

    @classmethod
    def mean(cls, values: Sequence[float]) -> TestScores:
        """Per-item scores whose mean is the result (exact match 1/0 per sentence, a per-sentence score)."""
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        return cls(np.stack([values, np.ones_like(values)], axis=1), "ratio")

    @classmethod
    def ratio(cls, numerators: Sequence[float], denominators: Sequence[float]) -> TestScores:
        """sum(numerators) / sum(denominators) over the items (correct tokens / tokens, per sentence)."""
        num = np.asarray(numerators, dtype=np.float64).reshape(-1)
        den = np.asarray(denominators, dtype=np.float64).reshape(-1)
        if num.shape != den.shape:
            raise ValueError(f"numerators has {num.size} items but denominators has {den.size}")
        if (den < 0).any() or den.sum() <= 0:
            raise ValueError("denominators must be non-negative with a positive sum")
        return cls(np.stack([num, den], axis=1), "ratio")

    @property
    def n_items(self) -> int:
        return self.items.shape[0]

    def __float__(self) -> float:
        return float(STATISTICS[self.statistic](self.items.sum(axis=0)))

    def resampled(self, counts: np.ndarray) -> np.ndarray:
        """The result on each resample of the test items: ``counts (R, N)``, how often each item was drawn
        in each resample -> ``(R,)``."""
        return STATISTICS[self.statistic](counts @ self.items)


@dataclass(frozen=True)
class Verdict:
    """Whether ``better`` ranks above ``worse``, and each part of the rule."""

    ranked: bool
    seeds_apart: bool  # rule 1: worst seed of `better` beats best seed of `worse`
    margin: float  # worst of `better` minus best of `worse` (in the direction of "better"); > 0 when apart
    chance: float  # rule 2: chance that identical variants look this far apart, times the family size
    resample_share: (
        float | None
    )  # rule 3: share of test resamples in which rule 1 still holds (None: no sample)


def family_chance(n_a: int, n_b: int, pairs: int = 1) -> float:
    """Chance that two identical variants with n_a and n_b seeds do not overlap, times ``pairs``."""
    return pairs * 2.0 / math.comb(n_a + n_b, n_a)


def _check_seeds(values: Sequence, name: str) -> list:
    values = list(values)
    if len(values) < 2:
        raise ValueError(f"{name} has {len(values)} seed(s); a ranking needs several seeds of each variant")
    kinds = {isinstance(v, TestScores) for v in values}
    if len(kinds) > 1:
        raise ValueError(f"{name} mixes TestScores and plain numbers across its seeds")
    if not kinds.pop():
        values = [float(v) for v in values]
        if any(not math.isfinite(v) for v in values):
            raise ValueError(f"{name} contains NaN or infinity: {values}")
    return values


def _resample_counts(n_items: int) -> np.ndarray:
    """``(RESAMPLES, N)``: how often each test item is drawn in each bootstrap resample (N draws with
    replacement: multinomial counts), from one fixed generator."""
    rng = np.random.default_rng(_BOOTSTRAP_SEED)
    return rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=RESAMPLES).astype(np.float64)


def verdict(
    better: Sequence,
    worse: Sequence,
    higher_is_better: bool = True,
    pairs: int = 1,
    names: tuple[str, str] = ("better", "worse"),
) -> Verdict:
    """Apply the rule to the per-seed results of two variants (floats, or ``TestScores`` on the same items).

    ``pairs``: how many pairs the table or section this comparison belongs to ranks (the family).
    """
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 1:
        raise ValueError(f"pairs must be a positive integer (the pairs this table ranks), got {pairs!r}")
    a, b = _check_seeds(better, names[0]), _check_seeds(worse, names[1])
    chance = family_chance(len(a), len(b), pairs)
    if chance > ALPHA:
        raise ValueError(
            f"{len(a)} against {len(b)} seeds cannot rank {pairs} pair(s): identical variants would look "
            f"apart with chance {chance:.3f} > {ALPHA} (add seeds, or rank fewer pairs)"
        )
    sign = 1.0 if higher_is_better else -1.0
    values_a, values_b = [sign * float(v) for v in a], [sign * float(v) for v in b]
    margin = min(values_a) - max(values_b)
    share = None
    if isinstance(a[0], TestScores) != isinstance(b[0], TestScores):
        raise ValueError("one variant has TestScores and the other plain numbers: score both the same way")
    if isinstance(a[0], TestScores):
        sizes = {s.n_items for s in a + b}
        if len(sizes) != 1:
            raise ValueError(f"the seeds were scored on test sets of different sizes {sorted(sizes)}")
        counts = _resample_counts(sizes.pop())
        worst_a = np.min([sign * s.resampled(counts) for s in a], axis=0)  # (R,)
        best_b = np.max([sign * s.resampled(counts) for s in b], axis=0)
        share = float((worst_a > best_b).mean())
    ranked = margin > 0 and (share is None or share >= 1.0 - ALPHA / pairs)
    return Verdict(ranked, margin > 0, margin, chance, share)


def rank_table(results: Mapping[str, Sequence], names: Sequence[str] | None = None, higher_is_better=True):
    """Every pair of ``names`` (default: all of ``results``) judged by the rule, the family being all the
    pairs: a DataFrame with one row per pair (``better``, ``worse``, ``verdict``: "ranked" or "tied", the
    margin and the share of test resamples that keep it)."""
    import pandas as pd

    names = list(results) if names is None else list(names)
    pairs = math.comb(len(names), 2)
    rows = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            mean_1 = np.mean([float(v) for v in results[first]])
            mean_2 = np.mean([float(v) for v in results[second]])
            up, down = (first, second) if (mean_1 >= mean_2) == higher_is_better else (second, first)
            v = verdict(results[up], results[down], higher_is_better, pairs, (up, down))
            rows.append(
                {
                    "better": up,
                    "worse": down,
                    "verdict": "ranked" if v.ranked else "tied",
                    "margin": v.margin,
                    "resamples kept": v.resample_share,
                }
            )
    return pd.DataFrame(rows)

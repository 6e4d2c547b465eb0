"""The course's one ranking rule (attnlib.ranking, claimed through attnlib.notebook): A ranks above B only
when A's worst seed beats B's best seed, with enough seeds for the number of pairs ranked, and still does on
resamples of the test set."""

import math

import numpy as np
import pytest

from attnlib import notebook
from attnlib.metrics import aer, aer_scores, bleu, bleu_scores, exact_scores, token_accuracy, token_scores
from attnlib.ranking import TestScores, family_chance, rank_table, verdict


def scores(accuracy: float, n: int, seed: int) -> TestScores:
    """Per-sentence 1/0 results with exactly round(accuracy * n) right, in a seeded order."""
    right = np.zeros(n)
    right[: round(accuracy * n)] = 1
    np.random.default_rng(seed).shuffle(right)
    return TestScores.mean(right)


# Rule 1: the seeds' ranges must not overlap
def test_a_variant_ranks_above_another_only_when_its_worst_seed_beats_the_others_best():
    assert notebook.ranked_above([97.0, 97.5, 98.0, 98.2], [96.0, 96.5, 96.9, 96.1])
    assert not notebook.ranked_above([97.0, 97.5, 98.0, 98.2], [96.0, 96.5, 97.2, 96.1])  # overlap: a tie


def test_lower_is_better_flips_the_rule():
    low, high = [0.10, 0.12, 0.11, 0.09], [0.20, 0.25, 0.13, 0.3]
    assert notebook.ranked_above(low, high, higher_is_better=False)
    assert not notebook.ranked_above(low, high)


# Rule 2: enough seeds for the number of pairs ranked
def test_the_chance_that_identical_variants_look_apart_is_two_over_the_binomial():
    assert family_chance(3, 3) == pytest.approx(0.1)
    assert family_chance(4, 4) == pytest.approx(2 / 70)
    assert family_chance(5, 5, pairs=6) == pytest.approx(12 / 252)


def test_three_seeds_against_three_can_never_rank():
    with pytest.raises(ValueError, match="3 against 3 seeds cannot rank 1 pair"):
        notebook.ranked_above([9.0, 9.1, 9.2], [1.0, 1.1, 1.2])


def test_five_seeds_rank_six_pairs_but_not_seven():
    a, b = [9.0, 9.1, 9.2, 9.3, 9.4], [1.0, 1.1, 1.2, 1.3, 1.4]
    assert notebook.ranked_above(a, b, pairs=6)
    with pytest.raises(ValueError, match="cannot rank 7 pair"):
        notebook.ranked_above(a, b, pairs=7)


def test_a_tie_needs_a_design_that_could_have_ranked():
    with pytest.raises(ValueError, match="cannot rank"):  # 3 seeds: a tie that could never be broken
        notebook.claim_tied({"a": [1.0, 2.0, 3.0], "b": [1.5, 2.5, 3.5]}, ["a", "b"], "a and b tie")


def test_identical_variants_rarely_look_apart():
    # Positive control of rule 2: 2000 tables of two identical variants, 4 seeds each, ranked as one pair.
    rng = np.random.default_rng(1)
    apart = sum(
        notebook.ranked_above(list(rng.normal(size=4)), list(rng.normal(size=4)))
        or notebook.ranked_above(list(rng.normal(size=4)), list(rng.normal(size=4)), higher_is_better=False)
        for _ in range(2000)
    )
    assert apart / 2000 < 0.05


# Rule 3: the test sample's noise
def test_a_gap_within_the_test_samples_noise_does_not_rank():
    # Four seeds each, their ranges apart by 0.5 points on 615 sentences: sampling noise (about 1.7 points)
    # swamps it.
    a = [scores(0.905 + 0.001 * i, 615, i) for i in range(4)]
    b = [scores(0.895 - 0.001 * i, 615, 10 + i) for i in range(4)]
    v = verdict(a, b)
    assert v.seeds_apart and not v.ranked and v.resample_share < 0.95


def test_a_gap_far_beyond_the_test_samples_noise_ranks():
    a = [scores(0.95 + 0.002 * i, 615, i) for i in range(4)]
    b = [scores(0.70 + 0.002 * i, 615, 10 + i) for i in range(4)]
    v = verdict(a, b)
    assert v.ranked and v.resample_share == 1.0


def test_the_verdict_is_the_same_on_every_call():
    a = [scores(0.91 + 0.002 * i, 300, i) for i in range(4)]
    b = [scores(0.86 + 0.002 * i, 300, 10 + i) for i in range(4)]
    assert verdict(a, b) == verdict(a, b)


def test_seeds_scored_on_different_test_sets_are_refused():
    with pytest.raises(ValueError, match="test sets of different sizes"):
        verdict([scores(0.9, 100, i) for i in range(4)], [scores(0.5, 90, i) for i in range(4)])


def test_test_scores_and_plain_numbers_are_not_mixed():
    with pytest.raises(ValueError, match="score both the same way"):
        verdict([scores(0.9, 100, i) for i in range(4)], [0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="mixes TestScores and plain numbers"):
        verdict([scores(0.9, 100, 0), 0.9, 0.9, 0.9], [0.1, 0.2, 0.3, 0.4])


def test_nan_is_refused():
    with pytest.raises(ValueError, match="NaN"):
        notebook.ranked_above([1.0, float("nan"), 3.0, 4.0], [0.0, 0.5, 0.1, 0.2])
    with pytest.raises(ValueError, match="NaN"):
        TestScores.mean([1.0, float("nan")])


# Claims
def test_claim_ranked_checks_each_neighbour_in_the_order(monkeypatch):
    monkeypatch.setenv(notebook.STRICT_CLAIMS, "1")
    results = {
        "dot": [0.9, 0.91, 0.92, 0.93, 0.94],
        "general": [0.8, 0.82, 0.85, 0.84, 0.83],
        "concat": [0.84, 0.7, 0.7, 0.7, 0.7],
    }
    notebook.claim_ranked(results, ["dot", "general"], "dot beats general")
    with pytest.raises(AssertionError, match="general beats concat"):
        notebook.claim_ranked(results, ["dot", "general", "concat"], "general beats concat")


def test_claim_ranked_names_a_variant_it_does_not_have():
    with pytest.raises(ValueError, match=r"order names \['location'\]"):
        notebook.claim_ranked({"dot": [1, 2, 3, 4], "general": [1, 2, 3, 4]}, ["dot", "location"], "x")


def test_claim_tied_holds_only_when_no_variant_separates(monkeypatch):
    monkeypatch.setenv(notebook.STRICT_CLAIMS, "1")
    results = {"a": [1.0, 2.0, 3.0, 2.2], "b": [2.5, 1.5, 2.0, 2.1], "c": [4.0, 5.0, 6.0, 7.0]}
    notebook.claim_tied(results, ["a", "b"], "a and b cannot be told apart", pairs=1)
    with pytest.raises(AssertionError):
        notebook.claim_tied(results, ["a", "c"], "a and c cannot be told apart", pairs=1)


def test_rank_table_judges_every_pair_with_the_whole_table_as_its_family():
    results = {
        name: [base + 0.01 * i for i in range(6)] for name, base in (("a", 3.0), ("b", 2.0), ("c", 1.0))
    }
    table = rank_table(results)
    assert len(table) == math.comb(3, 2)
    assert set(table["verdict"]) == {"ranked"}
    assert list(table[table["better"] == "a"]["worse"]) == ["b", "c"]


# What the evidence cells show
def test_mean_sd_range_and_seed_table():
    assert notebook.mean_sd_range([1.0, 2.0, 3.0], 2) == "2.00 ± 1.00 [1.00, 3.00]"
    table = notebook.seed_table({"dot": [0.5, 0.7]}, seeds=[0, 1], digits=2)
    assert list(table.columns) == ["seed 0", "seed 1", "mean ± sd [worst, best]"]
    assert table.loc["dot", "seed 1"] == 0.7


def test_sig_rounds_to_significant_digits():
    assert notebook.sig(0.0123456, 3) == 0.0123 and notebook.sig(98765.4, 2) == 99000.0


# The per-sentence scores add up to the corpus measures
def test_per_sentence_scores_give_the_corpus_measures():
    rng = np.random.default_rng(0)
    words = list("abcdef")
    hyps = [list(rng.choice(words, size=rng.integers(1, 9))) for _ in range(60)]
    refs = [list(rng.choice(words, size=rng.integers(1, 9))) for _ in range(60)]
    assert float(bleu_scores(hyps, refs)) == pytest.approx(bleu(hyps, refs), abs=1e-9)
    assert float(token_scores(hyps, refs)) == pytest.approx(token_accuracy(hyps, refs))
    assert float(exact_scores(hyps, hyps)) == 1.0
    links = [{(0, 0), (1, 2)}, {(0, 1)}, set()]
    gold = [{(0, 0), (1, 1)}, {(0, 1)}, {(0, 0)}]
    assert float(aer_scores(links, gold)) == pytest.approx(aer(links, gold))


def test_the_bootstrap_bleu_equals_sacrebleu_bit_for_bit_on_every_kind_of_row():
    from attnlib.ranking import _bleu, _bleu_one_at_a_time

    rng = np.random.default_rng(0)
    total = rng.integers(0, 60, size=(3000, 4))
    total[:300, 3] = 0  # no 4-grams at all (sacrebleu stops there)
    total[300:400, 1:] = 0
    correct = np.minimum(total, rng.integers(0, 40, size=(3000, 4)))
    correct[400:700] = 0  # no match of any order: BLEU 0
    correct[700:1000, 2:] = 0  # orders with no match: exponential smoothing
    sys_len = total[:, 0].copy()
    sys_len[1000:1100] = 0  # empty output: brevity penalty 0
    ref_len = rng.integers(0, 80, size=3000)
    sums = np.column_stack([sys_len, ref_len, correct, total]).astype(np.float64).reshape(3, 1000, 10)
    fast, reference = _bleu(sums), _bleu_one_at_a_time(sums)
    assert fast.shape == (3, 1000)
    assert np.array_equal(fast, reference)  # the same floats, not merely close
    assert (reference == 0).sum() > 300 and (reference > 0).sum() > 1000  # both kinds of row were there

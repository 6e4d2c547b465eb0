"""attnlib.notebook.claim: a claim of the prose about a trained model stops the book's runs when false, and
only prints a note in a learner's run (Colab, a GPU), where training may take another path."""

import pytest

from attnlib import notebook


def test_a_true_claim_is_silent_everywhere(monkeypatch, capsys):
    for strict in ("1", ""):
        monkeypatch.setenv(notebook.STRICT_CLAIMS, strict)
        notebook.claim(3 > 2, "three beats two")
    assert capsys.readouterr().out == ""


def test_a_false_claim_stops_the_books_runs(monkeypatch):
    monkeypatch.setenv(notebook.STRICT_CLAIMS, "1")
    with pytest.raises(AssertionError, match="the text claims that beam search wins"):
        notebook.claim(False, "beam search wins")


def test_a_false_claim_only_prints_a_note_for_a_learner(monkeypatch, capsys):
    monkeypatch.delenv(notebook.STRICT_CLAIMS, raising=False)
    notebook.claim(False, "beam search wins")  # and goes on
    out = capsys.readouterr().out
    assert out.startswith("Note: the text claims that beam search wins") and "this run" in out


def test_a_claim_must_say_what_it_claims():
    with pytest.raises(ValueError, match="text must say what the prose claims"):
        notebook.claim(True, " ")


def test_the_learners_note_names_this_runs_torch_version(monkeypatch, capsys):
    import torch

    monkeypatch.delenv(notebook.STRICT_CLAIMS, raising=False)
    monkeypatch.setattr(torch, "__version__", "9.99.0")
    notebook.claim(False, "beam search wins")
    assert "this run uses torch 9.99.0" in capsys.readouterr().out


# Rankings of trained variants: one rule, every seed's result.
def test_a_variant_ranks_above_another_only_when_its_worst_seed_beats_the_others_best():
    assert notebook.ranked_above([97.0, 97.5, 98.0], [96.0, 96.5, 96.9])
    assert not notebook.ranked_above([97.0, 97.5, 98.0], [96.0, 96.5, 97.2])  # ranges overlap: a tie


def test_lower_is_better_flips_the_rule():
    assert notebook.ranked_above([0.10, 0.12, 0.11], [0.20, 0.25, 0.13], higher_is_better=False)
    assert not notebook.ranked_above([0.10, 0.12, 0.11], [0.20, 0.25, 0.13])


def test_a_ranking_needs_three_seeds_of_each_variant():
    with pytest.raises(ValueError, match="b has 2 seed"):
        notebook.ranked_above([1.0, 2.0, 3.0], [0.0, 0.5])


def test_a_ranking_refuses_nan():
    with pytest.raises(ValueError, match="a contains NaN"):
        notebook.ranked_above([1.0, float("nan"), 3.0], [0.0, 0.5, 0.1])


def test_claim_ranked_checks_each_neighbour_in_the_order(monkeypatch):
    monkeypatch.setenv(notebook.STRICT_CLAIMS, "1")
    results = {"dot": [0.9, 0.91, 0.92], "general": [0.8, 0.82, 0.85], "concat": [0.84, 0.7, 0.75]}
    notebook.claim_ranked(results, ["dot", "general"], "dot beats general")
    with pytest.raises(AssertionError, match="general beats concat"):
        notebook.claim_ranked(results, ["dot", "general", "concat"], "general beats concat")


def test_claim_ranked_names_a_variant_it_does_not_have():
    with pytest.raises(ValueError, match=r"order names \['location'\]"):
        notebook.claim_ranked({"dot": [1, 2, 3], "general": [1, 2, 3]}, ["dot", "location"], "x")


def test_claim_tied_holds_only_when_no_variant_separates(monkeypatch):
    monkeypatch.setenv(notebook.STRICT_CLAIMS, "1")
    results = {"a": [1.0, 2.0, 3.0], "b": [2.5, 1.5, 2.0], "c": [4.0, 5.0, 6.0]}
    notebook.claim_tied(results, ["a", "b"], "a and b cannot be told apart")
    with pytest.raises(AssertionError):
        notebook.claim_tied(results, ["a", "c"], "a and c cannot be told apart")


def test_seed_spread_is_mean_min_max():
    assert notebook.seed_spread([1.0, 2.0, 6.0]) == (3.0, 1.0, 6.0)


def test_all_claims_held_turns_false_after_a_failed_claim(monkeypatch):
    monkeypatch.delenv(notebook.STRICT_CLAIMS, raising=False)
    monkeypatch.setattr(notebook, "_failed", [])
    notebook.claim(True, "true")
    assert notebook.all_claims_held()
    notebook.claim(False, "false")
    assert not notebook.all_claims_held()

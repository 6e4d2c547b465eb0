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


def test_the_learners_note_names_this_runs_torch_version_and_seeds(monkeypatch, capsys):
    import torch

    monkeypatch.delenv(notebook.STRICT_CLAIMS, raising=False)
    monkeypatch.setenv("ATTNLIB_SEED_BASE", "1000")
    monkeypatch.setattr(torch, "__version__", "9.99.0")
    notebook.claim(False, "beam search wins")
    out = capsys.readouterr().out
    assert "This run uses torch 9.99.0 and seeds counted from 1000" in out
    assert "slightly different path" not in out  # the note does not guess a cause


def test_seed_spread_is_mean_min_max():
    assert notebook.seed_spread([1.0, 2.0, 6.0]) == (3.0, 1.0, 6.0)


def test_all_claims_held_turns_false_after_a_failed_claim(monkeypatch):
    monkeypatch.delenv(notebook.STRICT_CLAIMS, raising=False)
    monkeypatch.setattr(notebook, "_failed", [])
    notebook.claim(True, "true")
    assert notebook.all_claims_held()
    notebook.claim(False, "false")
    assert not notebook.all_claims_held()

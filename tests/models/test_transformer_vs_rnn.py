"""attnlib.transformer_vs_rnn: chapter 9's like-for-like set-up (the models, their sizes, the choice of the
learning rate), shared by the chapter and its stored results (tools/recipes/ch09_*.py)."""

import pytest

from attnlib import transformer_vs_rnn as tvr
from attnlib.seq2seq import Seq2Seq
from attnlib.transformer import Seq2SeqTransformer


def count(model) -> int:
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("size", tvr.SIZES)
def test_the_two_models_have_the_same_size_to_within_one_percent(size):
    rnn, transformer = count(tvr.build(tvr.RNN, size)), count(tvr.build(tvr.TRANSFORMER, size))
    assert abs(transformer - rnn) / rnn < 0.01


def test_the_chapter_8_size_is_chapter_8s_model():
    # chapter 8 builds build_model("luong", ..., emb=64, hidden=64, score="general", input_feed=True)
    rnn = tvr.build(tvr.RNN, "chapter 8")
    assert isinstance(rnn, Seq2Seq) and count(rnn) == 144_970
    assert rnn.config.emb == 64 and rnn.config.hidden == 64 and rnn.config.input_feed
    assert rnn.config.score == "general"


def test_the_half_size_is_about_half_of_it():
    assert 0.45 < count(tvr.build(tvr.RNN, "half")) / count(tvr.build(tvr.RNN, "chapter 8")) < 0.55


def test_build_makes_the_transformer_of_the_size_asked_for():
    model = tvr.build(tvr.TRANSFORMER, "half")
    assert isinstance(model, Seq2SeqTransformer) and model.config.d_model == 32


@pytest.mark.parametrize(("kind", "size"), [("LSTM", "half"), (tvr.RNN, "double")])
def test_build_refuses_an_unknown_model_or_size_by_name(kind, size):
    with pytest.raises(ValueError, match="kind must be one of"):
        tvr.build(kind, size)


def sweep_of(bleu_per_seed: list[dict[str, list[float]]]) -> dict:
    rates = [0.001, 0.01, 0.1]
    return {"seeds": {s: {"learning rates": rates, "valid BLEU": b} for s, b in enumerate(bleu_per_seed)}}


def test_the_chosen_rate_has_the_best_mean_over_the_seeds_not_the_best_single_seed():
    # per seed, the rates 0.001, 0.01, 0.1; the best single run (99 at 0.1) has the worse mean
    runs = [[50.0, 90.0, 99.0], [50.0, 90.0, 10.0], [50.0, 91.0, 20.0]]
    keys = [f"{kind}, {size}" for kind in tvr.KINDS for size in tvr.SIZES]
    sweep = sweep_of([{key: runs[s] for key in keys} for s in range(3)])
    chosen = tvr.chosen_rates(sweep)
    assert set(chosen) == {(kind, size) for kind in tvr.KINDS for size in tvr.SIZES}
    assert set(chosen.values()) == {0.01}


def test_the_chosen_rate_is_chosen_for_each_model_and_size_apart():
    keys = [f"{kind}, {size}" for kind in tvr.KINDS for size in tvr.SIZES]
    best = {key: i % 3 for i, key in enumerate(keys)}  # a different best rate for each (model, size)
    bleu = {key: [90.0 if j == best[key] else 10.0 for j in range(3)] for key in keys}
    chosen = tvr.chosen_rates(sweep_of([bleu, bleu]))
    assert [chosen[kind, size] for kind in tvr.KINDS for size in tvr.SIZES] == [
        [0.001, 0.01, 0.1][best[key]] for key in keys
    ]

"""attnlib.analysis as a specification: crossings are reorderings, compression keeps content words in order,
features name the construction, and perturbed attention replaces the weights the decoder uses, then restores
the decoder."""

import pytest
import torch

from attnlib import analysis
from attnlib.data import Pair, collate, translation_task
from attnlib.seq2seq import build_model
from attnlib.seq2seq.decoding import greedy


@pytest.fixture(scope="module")
def task():
    return translation_task(seed=0, n=200)


def tiny_luong(task):
    return build_model(
        "luong", task.src_vocab, task.tgt_vocab, emb=8, hidden=8, input_feed=True, device="cpu"
    )


def test_crossings_finds_the_adjective_after_the_noun():
    # "the red house" -> "la casa roja": casa (t=1) <- house (s=2), roja (t=2) <- red (s=1)
    links = {(0, 0), (1, 2), (2, 1)}
    assert analysis.crossings(links) == [((1, 2), (2, 1))]


def test_monotone_links_have_no_crossing():
    assert analysis.crossings({(0, 0), (1, 1), (2, 1), (3, 2)}) == []


def test_compression_keeps_content_words_in_order_with_monotone_links():
    pair = Pair(src="he does not read the new books".split(), tgt=["x"])
    out = analysis.compression_pair(pair)
    assert out.tgt == "he not read new books".split()
    assert out.alignment == frozenset({(0, 0), (1, 2), (2, 3), (3, 5), (4, 6)})
    assert analysis.crossings(out.alignment) == []
    assert out.src == pair.src


def test_adjective_crossing_is_the_adjective_and_its_noun_not_any_crossing():
    adjective = Pair("i see the red car".split(), "veo el coche rojo".split(), frozenset({(2, 4), (3, 3)}))
    assert analysis.adjective_crossing(adjective) == ((2, 4), (3, 3))
    # "the boys are still busy" -> "los niños todavía están ocupados": still/are cross, no adjective + noun
    still = Pair(
        "the boys are still busy".split(),
        "los niños todavía están ocupados".split(),
        frozenset({(0, 0), (1, 1), (2, 3), (3, 2), (4, 4)}),
    )
    assert analysis.crossings(still.alignment) and analysis.adjective_crossing(still) is None


def test_features_name_the_construction_and_the_verb():
    question = Pair("are you at home".split(), "¿ estás en casa ?".split(), frozenset({(1, 0), (1, 1)}))
    negation = Pair("i am not tired".split(), "no estoy cansado".split(), frozenset({(0, 2), (1, 1)}))
    adjective = Pair("i see the red car".split(), "veo el coche rojo".split(), frozenset({(2, 4), (3, 3)}))
    plain = Pair("i am tired".split(), "estoy cansado".split(), frozenset({(0, 1), (1, 2)}))
    got = [analysis.features(p)["construction"] for p in (question, negation, adjective, plain)]
    assert got == ["question", "negation", "adjective + noun", "plain"]
    assert analysis.features(plain)["verb"] == "be" and analysis.features(adjective)["verb"] == "other"
    assert analysis.features(plain)["source length"] == 3


def _weights(model, batch, mode=None):
    if mode is None:
        return greedy(model, batch.src, batch.src_lengths, max_len=4).weights
    with analysis.perturbed_attention(model.decoder, mode, seed=0):
        return greedy(model, batch.src, batch.src_lengths, max_len=4).weights


def test_uniform_mode_spreads_the_weights_evenly_over_real_positions(task):
    model = tiny_luong(task)
    batch = collate(task.train[:3], task.src_vocab, task.tgt_vocab)
    for w, pair in zip(_weights(model, batch, "uniform"), task.train[:3], strict=True):
        assert torch.allclose(w, torch.full_like(w, 1 / len(pair.src)))


def test_permuted_mode_keeps_each_rows_values_and_hard_mode_is_one_hot(task):
    model = tiny_luong(task)
    batch = collate(task.train[:3], task.src_vocab, task.tgt_vocab)
    w0 = _weights(model, batch)[0]  # the first step depends on the source only: compare it
    w_perm = _weights(model, batch, "permuted")[0]
    assert torch.allclose(w_perm[0].sort().values, w0[0].sort().values, atol=1e-6)
    w_hard = _weights(model, batch, "hard")[0]
    assert torch.equal(w_hard[0], torch.nn.functional.one_hot(w0[0].argmax(), w0.shape[1]).float())


def test_the_decoder_is_restored_after_the_block(task):
    model = tiny_luong(task)
    batch = collate(task.train[:3], task.src_vocab, task.tgt_vocab)
    before = _weights(model, batch)
    with analysis.perturbed_attention(model.decoder, "uniform"):
        pass
    assert "attention" not in vars(model.decoder)
    for a, b in zip(before, _weights(model, batch), strict=True):
        assert torch.equal(a, b)


def test_an_unknown_mode_is_refused(task):
    with pytest.raises(ValueError, match="mode must be one of"):
        with analysis.perturbed_attention(tiny_luong(task).decoder, "random"):
            pass

"""attnlib.probe as a specification: the ridge probe is exact where a linear read-out exists, batched probes
are independent, the encoder's states are those the plain decoder sees, and per-length scores are sound."""

import pytest
import torch

from attnlib import probe
from attnlib.data import make_batches, make_sequence_task, sequence_task
from attnlib.seq2seq import build_model
from attnlib.seq2seq.encoder import final_states


def tiny_model(vocab, hidden: int = 8):
    return build_model("plain", vocab, vocab, emb=8, hidden=hidden, device="cpu")


def test_probe_reads_labels_that_are_linear_in_the_features():
    labels = torch.randint(0, 5, (200,))
    noise = 0.05 * torch.randn(200, 5, dtype=torch.float64)
    features = torch.nn.functional.one_hot(labels, 5).double() + noise  # (N, d): class k lifts feature k
    W = probe.fit_linear_probe(features, labels, n_classes=5)
    assert W.shape == (6, 5)  # d + 1 (bias) rows, one column per class
    assert torch.equal(probe.probe_predict(W, features), labels)


def test_probe_at_chance_on_features_without_the_labels():
    labels = torch.randint(0, 4, (4000,))
    noise = torch.randn(4000, 3, dtype=torch.float64)  # independent of the labels
    W = probe.fit_linear_probe(noise[:2000], labels[:2000], n_classes=4)
    accuracy = (probe.probe_predict(W, noise[2000:]) == labels[2000:]).double().mean().item()
    assert accuracy < 0.32  # chance is 0.25


def test_leading_dims_are_independent_probes():
    features = torch.randn(3, 50, 4, dtype=torch.float64)  # (S, N, d)
    labels = torch.randint(0, 3, (3, 50))
    batched = probe.fit_linear_probe(features, labels, n_classes=3)
    for s in range(3):
        assert torch.allclose(batched[s], probe.fit_linear_probe(features[s], labels[s], n_classes=3))


def test_encoder_states_give_the_context_the_plain_decoder_sees():
    pairs = make_sequence_task("reverse", 6, 5, 5, seed=0)
    task = sequence_task("reverse", n=50, min_len=5, max_len=5, seed=0)
    model = tiny_model(task.src_vocab)
    src, H, c = probe.encoder_states(model, pairs, task.src_vocab)
    assert src.shape == (6, 5) and H.shape == (6, 5, 16) and c.shape == (6, 16)
    assert torch.allclose(c, final_states(H, torch.full((6,), 5), bidirectional=True))
    assert torch.allclose(c[:, :8], H[:, -1, :8]) and torch.allclose(c[:, 8:], H[:, 0, 8:])  # [→h_S; ←h_1]


def test_encoder_states_refuse_mixed_lengths():
    task = sequence_task("reverse", n=50, min_len=3, max_len=6, seed=0)
    with pytest.raises(ValueError, match="one source length"):
        probe.encoder_states(tiny_model(task.src_vocab), task.train[:10], task.src_vocab)


def test_position_recovery_memory_beats_one_vector_on_long_inputs():
    task = sequence_task("reverse", n=50, min_len=3, max_len=6, seed=0)
    result = probe.position_recovery(tiny_model(task.src_vocab), task.src_vocab, 12, n_train=600, n_test=300)
    assert result["final"].shape == result["memory"].shape == (12,)
    assert result["memory"].mean() > result["final"].mean() + 0.2


def test_accuracy_by_length_scores_each_length_with_exact_match_at_most_token_accuracy():
    task = sequence_task("reverse", n=200, min_len=3, max_len=6, seed=0)
    scores = probe.accuracy_by_length(tiny_model(task.src_vocab), task.test, task.src_vocab, task.tgt_vocab)
    assert list(scores) == sorted({len(p.src) for p in task.test})
    for exact, token in scores.values():
        assert 0.0 <= exact <= token <= 1.0  # within one length an exact sentence has all its tokens right


def test_scores_by_length_keep_one_item_per_test_sentence_and_agree_with_accuracy_by_length():
    task = sequence_task("reverse", n=200, min_len=3, max_len=6, seed=0)
    model = tiny_model(task.src_vocab)
    per_sentence = probe.scores_by_length(model, task.test, task.src_vocab, task.tgt_vocab)
    corpus = probe.accuracy_by_length(model, task.test, task.src_vocab, task.tgt_vocab)
    for S, (exact, token) in per_sentence.items():
        n = sum(len(p.src) == S for p in task.test)
        assert exact.n_items == token.n_items == n  # one item per test sentence of length S
        assert (token.items[:, 1] == S).all()  # a reversal's reference has S tokens
        assert (float(exact), float(token)) == corpus[S]


def test_length_measures_are_plain_lists_with_one_entry_per_length_asked_for():
    task = sequence_task("reverse", n=200, min_len=3, max_len=6, seed=0)
    model = tiny_model(task.src_vocab)
    m = probe.length_measures(
        model,
        task.test,
        task.src_vocab,
        task.tgt_vocab,
        ranked_lengths=[4, 6],
        step_lengths=[5],
        probe_lengths=[3],
    )
    corpus = probe.accuracy_by_length(model, task.test, task.src_vocab, task.tgt_vocab)
    assert m["lengths"] == sorted(corpus)
    assert m["token"] == [corpus[S][1] for S in m["lengths"]]
    assert m["exact"] == [corpus[S][0] for S in m["lengths"]]
    for S, right in zip([4, 6], m["right"], strict=True):  # right tokens of each test sentence of S digits
        assert len(right) == sum(len(p.src) == S for p in task.test)
        assert all(isinstance(r, int) and 0 <= r <= S for r in right)
        assert sum(right) / (S * len(right)) == pytest.approx(corpus[S][1])
    assert [len(row) for row in m["by_step"]] == [5]  # one per output step of a 5-digit reversal
    assert [len(row) for row in m["final"]] == [len(row) for row in m["memory"]] == [3]


def test_source_gradient_norms_have_one_row_per_target_step_and_one_column_per_source_token():
    task = sequence_task("reverse", n=50, min_len=3, max_len=6, seed=0)
    batch = make_batches(make_sequence_task("reverse", 4, 6, 6, seed=1), task.src_vocab, task.tgt_vocab, 4)[0]
    for kind in ("plain", "luong"):
        model = build_model(kind, task.src_vocab, task.tgt_vocab, emb=8, hidden=8, device="cpu")
        G = probe.source_gradient_norms(model, batch)
        assert G.shape == (7, 6)  # (T, S): 6 target tokens and <eos>, 6 source tokens
        assert (G > 0).all()  # every source token influences every step (a bidirectional encoder)


def test_source_gradient_norms_are_the_mean_of_each_sentences_own_gradient():
    task = sequence_task("reverse", n=50, min_len=3, max_len=6, seed=0)
    pairs = make_sequence_task("reverse", 2, 5, 5, seed=1)
    model = build_model("luong", task.src_vocab, task.tgt_vocab, emb=8, hidden=8, device="cpu")
    both = probe.source_gradient_norms(model, make_batches(pairs, task.src_vocab, task.tgt_vocab, 2)[0])
    alone = [
        probe.source_gradient_norms(model, make_batches([p], task.src_vocab, task.tgt_vocab, 1)[0])
        for p in pairs
    ]
    assert torch.allclose(both, (alone[0] + alone[1]) / 2, atol=1e-6)


def test_source_gradient_norms_refuse_mixed_lengths():
    task = sequence_task("reverse", n=50, min_len=3, max_len=6, seed=0)
    pairs = make_sequence_task("reverse", 1, 3, 3, seed=1) + make_sequence_task("reverse", 1, 6, 6, seed=2)
    model = build_model("plain", task.src_vocab, task.tgt_vocab, emb=8, hidden=8, device="cpu")
    with pytest.raises(ValueError, match="one source length"):
        probe.source_gradient_norms(model, make_batches(pairs, task.src_vocab, task.tgt_vocab, 2)[0])

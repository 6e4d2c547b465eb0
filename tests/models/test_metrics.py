"""Specification of attnlib.metrics."""

import math

import pytest
import torch
import torch.nn.functional as F

from attnlib import metrics
from attnlib.data.batching import Pair, collate
from attnlib.seq2seq import build_model

from .tiny import VOCAB

SOURCES = ["abc", "fedcba", "ed"]


def test_bleu_of_identical_corpora_is_100():
    corpus = [["¿", "todavía", "estás", "en", "casa", "?"], ["la", "casa", "roja", "es", "grande"]]
    assert metrics.bleu(corpus, corpus) == pytest.approx(100.0)


def test_bleu_accepts_strings_and_drops_for_a_wrong_word():
    refs = ["el gato negro come pescado fresco hoy"]
    assert metrics.bleu(["el gato negro come pescado fresco ayer"], refs) < 100


def test_aer_on_a_hand_example():
    # A = {(0,0), (1,2), (2,1)}, S = {(0,0), (1,1)}, P = S ∪ {(1,2)}
    # |A∩S| = 1, |A∩P| = 2, |A| = 3, |S| = 2  ->  AER = 1 - (1 + 2) / (3 + 2) = 0.4
    A = {(0, 0), (1, 2), (2, 1)}
    S = {(0, 0), (1, 1)}
    P = S | {(1, 2)}
    assert metrics.aer(A, S, P) == pytest.approx(0.4)


def test_aer_is_zero_for_the_gold_and_one_for_disjoint_links():
    gold = frozenset({(0, 1), (1, 0)})
    assert metrics.aer(gold, gold) == 0.0
    assert metrics.aer({(0, 0), (1, 1)}, gold) == 1.0


def test_corpus_aer_sums_counts_over_sentences():
    A = [{(0, 0)}, {(0, 0), (1, 1), (2, 2)}]
    S = [{(0, 0)}, {(0, 1), (1, 1), (2, 2)}]
    # counts: |A∩S| = 1 + 2, |A| = 1 + 3, |S| = 1 + 3  ->  1 - 6 / 8
    assert metrics.aer(A, S) == pytest.approx(0.25)


def test_attention_links_take_the_argmax_and_skip_eos_and_unaligned_steps():
    weights = torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.3, 0.6, 0.1], [0.0, 0.0, 1.0]])  # (T=4, S=3)
    assert metrics.attention_links(weights, n_target=3) == {(0, 0), (1, 2), (2, 1)}  # step 3 is <eos>
    assert metrics.attention_links(weights, n_target=3, n_source=2) == {(0, 0), (1, 0), (2, 1)}
    assert metrics.attention_links(weights, n_target=3, steps={0, 2}) == {(0, 0), (2, 1)}


def test_perplexity_is_exp_of_the_mean_nll_over_real_tokens():
    logits = torch.randn(2, 3, 5)
    targets = torch.tensor([[1, 4, 0], [2, 0, 0]])  # 0 = <pad>
    logp = F.log_softmax(logits, dim=-1)
    nll = [-logp[0, 0, 1], -logp[0, 1, 4], -logp[1, 0, 2]]
    assert metrics.perplexity(logits, targets) == pytest.approx(math.exp(sum(nll).item() / 3), rel=1e-5)


def test_uniform_prediction_has_perplexity_equal_to_the_vocabulary_size():
    assert metrics.perplexity(torch.zeros(1, 4, 7), torch.tensor([[1, 2, 3, 4]])) == pytest.approx(7.0)


def test_exact_match_and_token_accuracy():
    hyps = [[1, 2, 3], [1, 2], [4]]
    refs = [[1, 2, 3], [1, 2, 5], [4, 4]]
    assert metrics.exact_match(hyps, refs) == pytest.approx(1 / 3)
    assert metrics.token_accuracy(hyps, refs) == pytest.approx((3 + 2 + 1) / 8)


def test_strip_special_cuts_at_eos_and_drops_pad_and_sos():
    assert metrics.strip_special([1, 5, 0, 6, 2, 7]) == [5, 6]


def test_metrics_refuse_corpora_of_different_sizes():
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        metrics.exact_match([[1], [2]], [[1]])


def test_pair_links_score_only_gold_aligned_words_over_real_source_words():
    pair = Pair(src=list("ab"), tgt=list("xyz"), alignment=frozenset({(0, 1), (2, 0)}))  # "y" has no link
    weights = torch.tensor([[0.2, 0.7, 0.1], [0.9, 0.1, 0.0], [0.3, 0.2, 0.5], [1.0, 0.0, 0.0]])  # (T+1, S+1)
    assert metrics.pair_links(weights, pair) == {(0, 1), (2, 0)}  # column 2 is padding, row 3 is <eos>


def test_pair_links_refuse_a_pair_without_gold_alignment():
    with pytest.raises(ValueError, match="no gold alignment"):
        metrics.pair_links(torch.ones(2, 2), Pair(src=list("ab"), tgt=list("xy")))


def test_model_alignments_are_the_pair_links_of_the_teacher_forced_weights():
    reversal = [frozenset((t, len(s) - 1 - t) for t in range(len(s))) for s in SOURCES]  # gold links
    pairs = [Pair(list(s), list(s[::-1]), links) for s, links in zip(SOURCES, reversal, strict=True)]
    batches = [collate(pairs[:2], VOCAB, VOCAB), collate(pairs[2:], VOCAB, VOCAB)]
    torch.manual_seed(0)
    model = build_model("luong", VOCAB, VOCAB, emb=8, hidden=8)
    model.train()
    predicted, gold = metrics.model_alignments(model, batches)
    assert model.training  # the mode it had
    model.eval()
    expected = []
    for b in batches:
        for w, p in zip(model(b)[1], b.examples, strict=True):  # teacher-forced (T, S) of each pair
            expected.append(metrics.pair_links(w, p))
    assert predicted == expected and gold == [p.alignment for p in pairs]
    assert metrics.aer(predicted, gold) == metrics.aer(expected, [p.alignment for p in pairs])


W23 = torch.ones(2, 3)  # (T, S)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((torch.ones(3), 1), ValueError, r"weights must be \(T, S\).*\(3,\)"),
        (([[1.0]], 1), TypeError, r"weights must be a torch.Tensor, got list"),
        ((W23, 3), ValueError, r"n_target is 3 but weights has only 2 rows"),
        ((W23, -1), ValueError, r"n_target must be >= 0, got -1"),
        ((W23, 1.5), TypeError, r"n_target must be an int, got float"),
        ((W23, 1, 4), ValueError, r"n_source is 4 but weights has only 3 columns"),
        ((W23, 1, 0), ValueError, r"n_source must be > 0, got 0"),
    ],
)
def test_attention_links_name_the_bad_argument(args, error, message):
    with pytest.raises(error, match=message):
        metrics.attention_links(*args)

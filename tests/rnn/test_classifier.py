"""The recall classifier: trained through attnlib.train.train, read out in eval mode."""

import pytest
import torch
from torch import nn

from attnlib.classifier import RecallClassifier, accuracy, train_classifier
from attnlib.data import recall_task


@pytest.mark.slow  # trains a model
def test_a_gru_learns_to_recall_after_a_few_distractors():
    tokens, labels = recall_task(1000, 3, seed=1)
    test_tokens, test_labels = recall_task(300, 3, seed=2)
    model = RecallClassifier("gru", vocab_size=12, n_classes=8, hidden=16)
    train_classifier(model, tokens, labels, steps=80)
    assert accuracy(model, test_tokens, test_labels) > 0.9


def test_train_classifier_is_adam_on_seeded_minibatches_with_clipping():
    """The loop train() runs for the classifier, written out: the same losses and weights, exactly."""
    tokens, labels = recall_task(200, 4, seed=1)
    torch.manual_seed(0)
    model = RecallClassifier("rnn", 12, 8, hidden=8)
    reference = RecallClassifier("rnn", 12, 8, hidden=8)
    reference.load_state_dict(model.state_dict())
    losses = train_classifier(model, tokens, labels, steps=15, batch_size=16, lr=1e-2, clip=0.5, seed=3)

    g, opt, expected = torch.Generator().manual_seed(3), torch.optim.Adam(reference.parameters(), lr=1e-2), []
    for _ in range(15):
        idx = torch.randint(len(labels), (16,), generator=g)
        loss = nn.functional.cross_entropy(reference(tokens[idx]), labels[idx])
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(reference.parameters(), 0.5)
        opt.step()
        expected.append(loss.item())
    assert losses == expected
    for got, want in zip(model.parameters(), reference.parameters(), strict=True):
        assert torch.equal(got, want)


def test_train_classifier_leaves_the_global_rng_alone():
    tokens, labels = recall_task(50, 2)
    model = RecallClassifier("gru", 12, 8, hidden=4)
    torch.manual_seed(1)
    expected = torch.rand(3)
    torch.manual_seed(1)
    train_classifier(model, tokens, labels, steps=3)
    assert torch.equal(torch.rand(3), expected)


def test_unknown_kind_names_the_valid_ones():
    with pytest.raises(ValueError, match=r"kind must be one of \['gru', 'lstm', 'rnn'\]"):
        RecallClassifier("transformer", 12, 8)

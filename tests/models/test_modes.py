"""evaluating(model): eval mode inside the block, the caller's mode restored after it."""

import pytest
import torch
from torch import nn

from attnlib import rnn
from attnlib.modes import evaluating


@pytest.mark.parametrize("training", [True, False])
def test_evaluating_switches_to_eval_and_restores_the_previous_mode(training):
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5)).train(training)
    with evaluating(model) as inside:
        assert inside is model
        assert not model.training and not model[1].training
    assert model.training is training
    assert model[1].training is training


def test_evaluating_restores_the_mode_when_the_block_raises():
    model = nn.Linear(2, 2).train()
    with pytest.raises(RuntimeError), evaluating(model):
        raise RuntimeError("boom")
    assert model.training


def test_rnn_accuracy_leaves_a_training_model_in_training_mode():
    model = rnn.RecallClassifier("gru", vocab_size=5, n_classes=3, hidden=4).train()
    rnn.accuracy(model, torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, dtype=torch.long))
    assert model.training

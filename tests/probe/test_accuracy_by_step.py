"""attnlib.probe.accuracy_by_step: per-step accuracy agrees with the outputs it returns; mixed target lengths
are refused."""

import pytest
import torch

from attnlib import probe
from attnlib.data import sequence_task
from attnlib.seq2seq import build_model


def _task_and_model():
    task = sequence_task("reverse", n=300, min_len=4, max_len=6, seed=0)
    torch.manual_seed(0)
    model = build_model("luong", task.src_vocab, task.tgt_vocab, emb=8, hidden=8, device="cpu")
    return task, model


def test_per_step_accuracy_counts_the_returned_outputs_step_by_step():
    task, model = _task_and_model()
    pairs = [p for p in task.test if len(p.tgt) == 5]
    by_step, hyps = probe.accuracy_by_step(model, pairs, task.src_vocab, task.tgt_vocab, batch_size=7)
    assert by_step.shape == (5,) and len(hyps) == len(pairs)
    for t in range(5):  # recount step t by hand from the returned outputs, in the order of ``pairs``
        right = [
            len(h) > t and h[t] == task.tgt_vocab.encode(p.tgt)[t] for h, p in zip(hyps, pairs, strict=True)
        ]
        assert by_step[t].item() == pytest.approx(sum(right) / len(pairs))
    assert ((0 <= by_step) & (by_step <= 1)).all()


def test_accuracy_by_step_refuses_mixed_target_lengths():
    task, model = _task_and_model()
    pairs = [next(p for p in task.test if len(p.tgt) == n) for n in (4, 6)]
    with pytest.raises(ValueError, match="one target length"):
        probe.accuracy_by_step(model, pairs, task.src_vocab, task.tgt_vocab)

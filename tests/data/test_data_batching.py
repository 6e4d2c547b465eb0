"""Specification of attnlib.data.batching: padded batches, masks, the decoder's shift, and splits."""

import pytest
import torch

from attnlib.data.batching import Pair, build_task, collate, make_batches, split
from attnlib.data.vocab import EOS_ID, PAD_ID, SOS_ID, Vocab

PAIRS = [
    Pair(["a", "b", "c"], ["x", "y"], frozenset({(0, 0), (1, 2)})),
    Pair(["a"], ["y", "x", "x", "y"], frozenset({(2, 0)})),
    Pair(["c", "b"], ["x"], frozenset()),
]
SRC, TGT = Vocab.build(p.src for p in PAIRS), Vocab.build(p.tgt for p in PAIRS)


@pytest.fixture
def batch():
    return collate(PAIRS, SRC, TGT)


def _numbered_pairs(n: int) -> list[Pair]:
    return [Pair([str(i)] * (1 + i % 7), ["y"] * (1 + i % 5)) for i in range(n)]


def test_batch_shapes_are_padded_to_the_longest(batch):
    assert batch.src.shape == (3, 3)  # (B, S)
    assert batch.tgt_in.shape == batch.tgt_out.shape == batch.tgt_mask.shape == (3, 5)  # T = 4 + 1
    assert batch.src.dtype == batch.tgt_in.dtype == torch.long
    assert len(batch) == 3


def test_padding_uses_id_zero(batch):
    assert batch.src[1, 1:].tolist() == [PAD_ID, PAD_ID]
    assert batch.tgt_out[2, 2:].tolist() == [PAD_ID] * 3


def test_src_lengths_and_mask_mark_real_tokens(batch):
    assert batch.src_lengths.tolist() == [3, 1, 2]
    assert batch.src_mask.dtype == torch.bool
    assert batch.src_mask.tolist() == [[True, True, True], [True, False, False], [True, True, False]]
    assert torch.equal(batch.src_mask, batch.src != PAD_ID)


def test_tgt_in_starts_with_sos_and_tgt_out_ends_with_eos(batch):
    for b, pair in enumerate(PAIRS):
        T = len(pair.tgt)
        assert batch.tgt_in[b, : T + 1].tolist() == [SOS_ID, *TGT.encode(pair.tgt)]
        assert batch.tgt_out[b, : T + 1].tolist() == [*TGT.encode(pair.tgt), EOS_ID]


def test_tgt_out_is_tgt_in_shifted_left(batch):
    real = batch.tgt_mask[:, 1:]  # positions where both are real tokens
    assert torch.equal(batch.tgt_in[:, 1:][real], batch.tgt_out[:, :-1][real])


def test_tgt_mask_covers_words_and_eos(batch):
    assert batch.tgt_mask.sum(1).tolist() == [3, 5, 2]
    assert torch.equal(batch.tgt_mask, batch.tgt_out != PAD_ID)


def test_examples_are_kept_in_batch_order(batch):
    assert batch.examples == PAIRS
    assert [SRC.decode(row) for row in batch.src] == [p.src for p in PAIRS]


def test_gold_alignment_tensor_holds_the_links(batch):
    assert batch.alignment.shape == (3, 5, 3)  # (B, T, S)
    assert batch.alignment.sum().item() == 3
    assert batch.alignment[0, 1, 2] and batch.alignment[1, 2, 0]


def test_alignment_is_none_when_an_example_has_none():
    assert collate([Pair(["a"], ["x"])], SRC, TGT).alignment is None


def test_to_moves_every_tensor(batch):
    moved = batch.to("meta")
    tensors = [moved.src, moved.src_lengths, moved.src_mask, moved.tgt_in, moved.tgt_out, moved.tgt_mask]
    assert all(t.device.type == "meta" for t in [*tensors, moved.alignment])
    assert batch.src.device.type == "cpu"  # the original is untouched


def test_make_batches_covers_every_example_once():
    pairs = _numbered_pairs(103)
    vocab = Vocab.build(p.src for p in pairs)
    batches = make_batches(pairs, vocab, vocab, 10, shuffle=True, seed=3, bucket=True, bucket_factor=3)
    assert [len(b) for b in batches].count(10) == 10
    assert sorted(p.src[0] for b in batches for p in b.examples) == sorted(p.src[0] for p in pairs)


def test_drop_last_drops_the_short_batch():
    pairs = _numbered_pairs(25)
    vocab = Vocab.build(p.src for p in pairs)
    assert [len(b) for b in make_batches(pairs, vocab, vocab, 10, drop_last=True)] == [10, 10]


def test_shuffle_is_deterministic_by_seed():
    pairs = _numbered_pairs(50)
    vocab = Vocab.build(p.src for p in pairs)

    def order(seed):
        return [
            p.src[0]
            for b in make_batches(pairs, vocab, vocab, 8, shuffle=True, seed=seed)
            for p in b.examples
        ]

    assert order(1) == order(1)
    assert order(1) != order(2)


def test_bucketing_reduces_padding():
    pairs = _numbered_pairs(400)
    vocab = Vocab.build(p.src for p in pairs)

    def padding(bucket):
        batches = make_batches(pairs, vocab, vocab, 16, shuffle=True, seed=0, bucket=bucket)
        return sum((~b.src_mask).sum().item() for b in batches)

    assert padding(bucket=True) < padding(bucket=False) / 4


def test_split_never_puts_a_source_in_two_parts():
    pairs = [Pair([str(i % 40)], [str(i)]) for i in range(200)]  # each source has 5 translations
    parts = split(pairs, (0.6, 0.2, 0.2), seed=0)
    sources = [{tuple(p.src) for p in part} for part in parts]
    assert not (sources[0] & sources[1] or sources[0] & sources[2] or sources[1] & sources[2])
    assert sum(map(len, parts)) == 200


def test_split_drops_exact_duplicates():
    pairs = [Pair(["a"], ["x"]), Pair(["a"], ["x"]), Pair(["b"], ["y"])]
    assert sum(map(len, split(pairs, (0.5, 0.5), seed=0))) == 2


def test_split_sizes_follow_fractions():
    parts = split(_numbered_pairs(1000), (0.8, 0.1, 0.1), seed=0)
    assert [len(p) for p in parts] == [800, 100, 100]


def test_split_is_deterministic_by_seed():
    pairs = _numbered_pairs(100)
    assert split(pairs, (0.5, 0.5), seed=1) == split(pairs, (0.5, 0.5), seed=1)
    assert split(pairs, (0.5, 0.5), seed=1) != split(pairs, (0.5, 0.5), seed=2)


def test_split_rejects_fractions_not_summing_to_one():
    with pytest.raises(ValueError, match="fractions"):
        split(PAIRS, (0.5, 0.4), seed=0)


def test_build_task_takes_vocabularies_from_train_only():
    task = build_task(([Pair(["a"], ["x"])], [Pair(["b"], ["y"])], []))
    assert "a" in task.src_vocab and "b" not in task.src_vocab
    assert "x" in task.tgt_vocab and "y" not in task.tgt_vocab

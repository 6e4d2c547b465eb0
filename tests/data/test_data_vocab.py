"""Specification of attnlib.data.vocab.Vocab."""

import json

import pytest

from attnlib.data.vocab import EOS_ID, PAD_ID, SOS_ID, UNK_ID, Vocab


@pytest.fixture
def vocab() -> Vocab:
    return Vocab.build([["the", "red", "house"], ["a", "red", "car"]])


def test_specials_have_fixed_ids(vocab):
    assert vocab.itos[:4] == ["<pad>", "<sos>", "<eos>", "<unk>"]
    assert (PAD_ID, SOS_ID, EOS_ID, UNK_ID) == (0, 1, 2, 3)


def test_tokens_are_sorted_after_the_specials(vocab):
    assert vocab.itos[4:] == ["a", "car", "house", "red", "the"]
    assert len(vocab) == 9


def test_build_does_not_depend_on_corpus_order():
    forward = Vocab.build([["b", "a"], ["c"]])
    backward = Vocab.build([["c"], ["a", "b"]])
    assert forward == backward


def test_min_count_drops_rare_tokens():
    assert Vocab.build([["a", "a", "b"]], min_count=2).itos[4:] == ["a"]


def test_encode_decode_round_trip(vocab):
    tokens = ["the", "red", "car"]
    assert vocab.decode(vocab.encode(tokens)) == tokens


def test_encode_frames_with_sos_and_eos(vocab):
    ids = vocab.encode(["red"], sos=True, eos=True)
    assert ids == [SOS_ID, vocab.id("red"), EOS_ID]


def test_unknown_token_encodes_to_unk(vocab):
    assert vocab.encode(["blue"]) == [UNK_ID]
    assert vocab.decode([UNK_ID]) == ["<unk>"]


def test_decode_stops_at_eos_and_drops_pad_and_sos(vocab):
    red, car = vocab.id("red"), vocab.id("car")
    assert vocab.decode([SOS_ID, red, PAD_ID, car, EOS_ID, red, red]) == ["red", "car"]


def test_decode_accepts_tensors(vocab):
    torch = pytest.importorskip("torch")
    assert vocab.decode(torch.tensor([vocab.id("the"), EOS_ID])) == ["the"]


def test_dict_is_json_able_and_round_trips(vocab):
    restored = Vocab.from_dict(json.loads(json.dumps(vocab.to_dict())))
    assert restored == vocab
    assert restored.stoi == vocab.stoi


def test_save_and_load_keep_ids_and_accents(tmp_path):
    vocab = Vocab.build([["¿", "todavía", "estás"]])
    path = tmp_path / "vocab.json"
    vocab.save(path)
    assert "todavía" in path.read_text(encoding="utf-8")
    assert Vocab.load(path).itos == vocab.itos


def test_from_dict_rejects_other_specials():
    with pytest.raises(ValueError, match="specials"):
        Vocab.from_dict({"specials": ["<s>", "</s>"], "tokens": ["a"]})


def test_constructor_keeps_first_occurrences_in_order_and_skips_specials():
    vocab = Vocab(["b", "<eos>", "a", "b", "<unk>", "c", "a"])
    assert vocab.itos == ["<pad>", "<sos>", "<eos>", "<unk>", "b", "a", "c"]
    assert all(vocab.stoi[token] == i for i, token in enumerate(vocab.itos))


def test_constructor_reads_each_token_once():
    """Linear, not quadratic: a lookup per token, never a scan of the tokens seen so far."""

    class CountingStr(str):
        comparisons = 0

        def __eq__(self, other):
            CountingStr.comparisons += 1
            return str.__eq__(self, other)

        __hash__ = str.__hash__

    tokens = [CountingStr(f"w{i}") for i in range(2000)]
    Vocab(tokens)
    assert CountingStr.comparisons < 10 * len(tokens)

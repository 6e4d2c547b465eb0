"""ModelConfig: one config per model; the sizes of the notes (d_h, d_s) are derived from it."""

import pytest

from attnlib.seq2seq import LuongConfig, LuongDecoder, ModelConfig, build_model


def test_d_h_is_both_directions_of_the_encoder():
    assert ModelConfig(5, 6, hidden=16).d_h == 32
    assert ModelConfig(5, 6, hidden=16, bidirectional=False).d_h == 16


@pytest.mark.parametrize(
    ("options", "d_s"),
    [
        ({}, 16),  # default: the encoder's size per direction
        ({"dec_hidden": 40}, 40),
        ({"bridge": "final"}, 32),  # s_0 = [→h_S; ←h_1] has size d_h
        ({"kind": "luong", "score": "dot"}, 32),  # s_t · h_s needs d_s = d_h
        ({"kind": "luong", "score": "general"}, 16),
    ],
)
def test_d_s_defaults_to_the_size_the_model_needs(options, d_s):
    assert ModelConfig(5, 6, hidden=16, **options).d_s == d_s


def test_build_model_passes_one_config_to_every_module():
    model = build_model("luong", 11, 13, device="cpu", hidden=8, score="dot")
    assert model.encoder.cfg is model.decoder.cfg is model.config
    assert (model.config.src_vocab, model.config.tgt_vocab) == (11, 13)
    assert model.decoder.W_s.out_features == 13 and model.decoder.rnn.hidden_size == 16


def test_luong_config_speaks_the_decoders_terms():
    cfg = LuongConfig(vocab_size=7, d_h=6, emb=3, hidden=4, input_feed=True)
    assert (cfg.tgt_vocab, cfg.d_h, cfg.d_s, cfg.emb, cfg.input_feed) == (7, 6, 4, 3, True)
    decoder = LuongDecoder(cfg)
    assert decoder.W_c.in_features == 6 + 4 and decoder.rnn.input_size == 3 + 4


def test_luong_config_takes_an_odd_annotation_size():
    assert LuongConfig(vocab_size=7, d_h=5, hidden=4).d_h == 5

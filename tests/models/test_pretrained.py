"""The trained models shipped in attnlib: what the exercises load is each chapter's own seed-0 model."""

import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from attnlib import inpage, inpage_file, metrics, pretrained
from attnlib.data import make_batches
from attnlib.seq2seq.decoding import decode_batches

ROOT = Path(__file__).resolve().parents[2]
NAMES = sorted(pretrained.RECIPES)


def page_model(chapter: str):
    """The model chapter ``chapter`` stores in its page (attnlib.inpage), rebuilt in Python."""
    pages = inpage_file.stored_specs(ROOT / "chapters" / f"{chapter}.ipynb")
    assert len(pages) == 1
    return inpage.model_from_spec(pages[0])[0].eval()


def share_agreeing(model, name: str) -> float:
    """The share of test inputs for which ``model`` writes what the shipped model ``name`` writes (greedy)."""
    shipped, task = pretrained.load(name)
    batches = make_batches(task.test, task.src_vocab, task.tgt_vocab, 500)
    ours, theirs = decode_batches(shipped, batches).tokens, decode_batches(model, batches).tokens
    return sum(a == b for a, b in zip(ours, theirs, strict=True)) / len(ours)


@pytest.mark.parametrize("name", NAMES)
def test_loads_in_milliseconds_with_the_vocabularies_of_its_data(name):
    start = time.perf_counter()
    model, src_vocab, tgt_vocab = pretrained.load_model(name)
    assert time.perf_counter() - start < 5  # generous: milliseconds on the course machine
    assert not model.training and all(p.device.type == "cpu" for p in model.parameters())
    _, task = pretrained.load(name)
    assert task.src_vocab == src_vocab and task.tgt_vocab == tgt_vocab


@pytest.mark.parametrize(("name", "at_least"), [("dates", 0.99), ("toy_translation", 0.9)])
def test_the_attention_models_are_trained(name, at_least):
    model, task = pretrained.load(name)
    batches = make_batches(task.test[:300], task.src_vocab, task.tgt_vocab, 300)
    out = decode_batches(model, batches)
    refs = [task.tgt_vocab.encode(p.tgt) for b in batches for p in b.examples]
    assert metrics.exact_match(out.tokens, refs) >= at_least


@pytest.mark.parametrize(
    ("name", "chapter"), [("dates", "04_bahdanau_attention"), ("toy_translation", "08_translation")]
)
@pytest.mark.usefixtures("one_machine_for_notebooks_and_data")
def test_it_is_the_model_the_chapter_puts_in_its_page(name, chapter):
    """Chapters 4 and 8 store their seed-0 model's weights in the page (attnlib.inpage): the same weights,
    where the chapters' outputs and the shipped weights were made on one kind of machine
    (tools/numeric_env.py: since the notebooks moved to the Intel Xeon and the weights stayed the AMD EPYC's,
    the page's model is the same recipe trained on another processor, and this test skips on both)."""
    in_page = page_model(chapter)
    shipped, _, _ = pretrained.load_model(name)
    for key, value in shipped.state_dict().items():
        assert torch.equal(value, in_page.state_dict()[key]), key


@pytest.mark.parametrize(
    ("name", "chapter"), [("dates", "04_bahdanau_attention"), ("toy_translation", "08_translation")]
)
def test_on_any_machine_the_page_holds_the_shipped_recipes_model(name, chapter):
    """Wherever the two were made, the page's model is the shipped model's recipe: on the test set it writes
    the same output for at least 9 inputs in 10 (measured with the page's model from the Intel Xeon and the
    shipped one from the AMD EPYC: dates 1,000 of 1,000, toy translation 389 of 400; another recipe, or an
    untrained model, writes other outputs)."""
    assert share_agreeing(page_model(chapter), name) >= 0.9


def test_control_a_model_of_the_same_shape_with_other_weights_writes_other_outputs():
    """Positive control for the test above: the dates page's model with its weights drawn afresh agrees with
    the shipped model on far fewer than 9 inputs in 10."""
    in_page = page_model("04_bahdanau_attention")
    torch.manual_seed(0)
    with torch.no_grad():
        for weight in in_page.parameters():
            weight.normal_(0, 0.3)
    assert share_agreeing(in_page, "dates") < 0.1


def test_an_unknown_name_is_refused_by_name():
    with pytest.raises(ValueError, match="name must be one of"):
        pretrained.load_model("dates2")


@pytest.mark.slow
@pytest.mark.usefixtures("reproducing_machine")
def test_retraining_gives_the_shipped_weights_bit_for_bit():
    run = subprocess.run(
        [sys.executable, "tools/pretrained.py", "check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr

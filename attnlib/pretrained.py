"""Small trained models shipped inside attnlib, for the exercises: load in well under a second, no download.

    model, task = attnlib.pretrained.load("dates")   # chapter 4's Bahdanau model (seed 0) and its data
    model, src_vocab, tgt_vocab = attnlib.pretrained.load_model("dates")   # milliseconds: no data rebuilt

Each model is one seed of a chapter's own training run, rebuilt by :func:`train_recipe` from its recipe below
(the chapter's data, model options, optimiser settings and seed) and stored as float32 weights with the
vocabularies in ``attnlib/checkpoints/<name>.pt``. ``tools/pretrained.py`` writes the files and checks, under
the course's pinned numeric environment, that retraining gives the stored weights bit for bit.

    name              chapter  model                                              data
    reverse_plain     2        no attention, bidirectional GRU encoder            reverse 5-30 digits
    dates             4        Bahdanau (additive score, s_{t-1}, context in the GRU gates)  dates -> ISO
    toy_translation   8        Luong, general score, input feeding                toy English -> Spanish
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from attnlib.data import Task, Vocab, dates_task, make_batches, sequence_task, translation_task
from attnlib.seq2seq import Seq2Seq, build_model
from attnlib.train import seed_everything, train

CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"


@dataclass(frozen=True)
class Recipe:
    """How one chapter trains one of its seeds: the data, the model, the budget."""

    chapter: int
    make_task: Callable[[], Task]
    kind: str
    model: dict = field(default_factory=dict)  # options of build_model
    steps: int = 300
    lr: float = 1e-2
    batch_size: int = 64
    seed: int = 0


RECIPES: dict[str, Recipe] = {
    "reverse_plain": Recipe(
        chapter=2,
        make_task=lambda: sequence_task(
            "reverse", n=16_000, min_len=5, max_len=30, seed=0, fractions=(0.75, 0.05, 0.2)
        ),
        kind="plain",
        model={"emb": 32, "hidden": 64},
    ),
    "dates": Recipe(
        chapter=4,
        make_task=lambda: dates_task(n_train=4000, n_valid=200, n_test=1000, seed=0),
        kind="bahdanau",
        model={"emb": 32, "hidden": 64, "attn": 64},
    ),
    "toy_translation": Recipe(
        chapter=8,
        make_task=lambda: translation_task(seed=0, n=4000),
        kind="luong",
        model={"emb": 64, "hidden": 64, "score": "general", "input_feed": True},
        steps=400,
        lr=5e-3,
    ),
}


def _checked(name: str) -> str:
    if name not in RECIPES:
        raise ValueError(f"name must be one of {sorted(RECIPES)}, got {name!r}")
    return name


def _recipe(name: str) -> Recipe:
    return RECIPES[_checked(name)]


def _build(name: str, src_vocab, tgt_vocab) -> Seq2Seq:
    recipe = _recipe(name)
    seed_everything(recipe.seed)  # the seed draws the initial weights, as in the chapter
    return build_model(recipe.kind, src_vocab, tgt_vocab, device="cpu", **recipe.model)


def train_recipe(name: str) -> tuple[Seq2Seq, Task]:
    """Train model ``name`` from scratch as its chapter does (10-20 s on one CPU thread)."""
    recipe = _recipe(name)
    task = recipe.make_task()
    model = _build(name, task.src_vocab, task.tgt_vocab)
    batches = make_batches(
        task.train, task.src_vocab, task.tgt_vocab, recipe.batch_size, shuffle=True, seed=0, bucket=True
    )
    train(model, batches, steps=recipe.steps, lr=recipe.lr, seed=recipe.seed, progress=False)
    model.eval()
    return model, task


def load_model(name: str) -> tuple[Seq2Seq, Vocab, Vocab]:
    """``(model, src_vocab, tgt_vocab)`` of the trained model ``name``, on the CPU in eval mode, without
    rebuilding its data (milliseconds; :func:`load` also rebuilds the task, 0.1-0.8 s)."""
    stored = torch.load(CHECKPOINTS / f"{_checked(name)}.pt", map_location="cpu", weights_only=True)
    src_vocab, tgt_vocab = Vocab(stored["src_vocab"][4:]), Vocab(stored["tgt_vocab"][4:])
    model = _build(name, src_vocab, tgt_vocab)
    model.load_state_dict(stored["weights"])
    model.eval()
    return model, src_vocab, tgt_vocab


def load(name: str) -> tuple[Seq2Seq, Task]:
    """``(model, task)``: the trained model ``name`` on the CPU in eval mode, and the task it was trained on
    (``task.src_vocab``, ``task.tgt_vocab``, ``task.train`` / ``valid`` / ``test`` pairs, gold alignments)."""
    model, src_vocab, tgt_vocab = load_model(name)
    task = _recipe(name).make_task()
    if task.src_vocab != src_vocab or task.tgt_vocab != tgt_vocab:
        raise RuntimeError(
            f"the data of {name!r} no longer gives the vocabularies its checkpoint was trained on"
        )
    return model, task


def save(name: str, model: Seq2Seq, task: Task) -> Path:
    """Write ``model``'s weights and ``task``'s vocabularies as checkpoint ``name`` (tools/pretrained.py)."""
    CHECKPOINTS.mkdir(exist_ok=True)
    path = CHECKPOINTS / f"{_checked(name)}.pt"
    weights = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    torch.save({"weights": weights, "src_vocab": task.src_vocab.itos, "tgt_vocab": task.tgt_vocab.itos}, path)
    return path

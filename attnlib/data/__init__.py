"""attnlib.data: the datasets of the course, as token pairs with gold alignments, and padded batches.

    vocab        Vocab (<pad>=0, <sos>=1, <eos>=2, <unk>=3)
    batching     Pair, Task, Batch, make_batches, split
    dates        human-readable dates -> ISO "YYYY-MM-DD", character level
    translation  toy English -> Spanish from a small grammar, with gold word alignments
    algorithmic  copy / reverse / sort of digit sequences
    recall       chapter 1's recall task: the first symbol after k distractors (tensors, not pairs)
    tatoeba      the real English-Spanish pairs of the TensorFlow NMT tutorial (spa.txt)

A lesson's data in three lines:

    task = dates_task(n_train=8000, n_valid=1000, n_test=1000, seed=0)
    for batch in make_batches(task.train, task.src_vocab, task.tgt_vocab, 64, shuffle=True, seed=epoch):
        ...  # batch.src (B, S), batch.src_mask (B, S), batch.tgt_in / batch.tgt_out (B, T)
"""

from attnlib.data.algorithmic import make_sequence_task, sequence_task
from attnlib.data.batching import Batch, Pair, Task, build_task, collate, make_batches, split
from attnlib.data.dates import date_formats, dates_task, make_dates, render
from attnlib.data.recall import recall_task
from attnlib.data.tatoeba import load_tatoeba, normalize
from attnlib.data.translation import make_translation_pairs, translation_task
from attnlib.data.vocab import EOS_ID, PAD_ID, SOS_ID, UNK_ID, Vocab

__all__ = [
    "EOS_ID",
    "PAD_ID",
    "SOS_ID",
    "UNK_ID",
    "Batch",
    "Pair",
    "Task",
    "Vocab",
    "build_task",
    "collate",
    "date_formats",
    "dates_task",
    "load_tatoeba",
    "make_batches",
    "make_dates",
    "make_sequence_task",
    "make_translation_pairs",
    "normalize",
    "recall_task",
    "render",
    "sequence_task",
    "split",
    "translation_task",
]

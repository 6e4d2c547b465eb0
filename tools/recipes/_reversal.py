"""Chapter 6's task for its recipes: reversing digit sequences, as the chapter builds it (not a recipe)."""

from attnlib.data import make_batches, sequence_task
from attnlib.seq2seq import build_model


def reversal_data():
    """(task, training batches, test batches, reference token ids), exactly as chapter 6 makes them."""
    task = sequence_task("reverse", n=5000, min_len=5, max_len=16, seed=0)
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, 32, shuffle=True, seed=0, bucket=True)
    test = make_batches(task.test, task.src_vocab, task.tgt_vocab, 500)
    references = [task.tgt_vocab.encode(p.tgt) for b in test for p in b.examples]
    return task, batches, test, references


def zoo_model(task, score: str, units: int = 32):
    """Chapter 6's Luong model scoring with ``score``, GRUs of ``units`` per direction (decoder: 2 x)."""
    return build_model(
        "luong",
        task.src_vocab,
        task.tgt_vocab,
        emb=16,
        hidden=units,
        dec_hidden=2 * units,
        attn=32,
        score=score,
        max_src_len=16,
    )

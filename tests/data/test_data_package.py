"""The package's front door: a lesson's whole data pipeline through ``attnlib.data`` alone."""

import attnlib.data as data


def test_public_names_are_exported():
    assert set(data.__all__) <= set(dir(data))


def test_task_to_batches_end_to_end():
    task = data.dates_task(64, 8, 8, seed=0)
    batches = data.make_batches(
        task.train, task.src_vocab, task.tgt_vocab, 16, shuffle=True, seed=0, bucket=True
    )
    assert sum(len(b) for b in batches) == 64
    batch = batches[0]
    assert batch.src.shape[0] == 16 and batch.tgt_out.shape[1] == len("2019-03-03") + 1  # ISO + <eos>
    assert task.tgt_vocab.decode(batch.tgt_out[0]) == batch.examples[0].tgt

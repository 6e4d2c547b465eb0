"""Chapter 4's date model, trained per seed at the chapter's budget and at four times it (attnlib.stored).

The chapter trains four seeds live, at 300 steps. This recipe trains the same model on the same data, with the
same optimiser and schedule, for a fixed list of seeds, at 300 steps and at 1,200: the chapter reads from it
what a longer budget changes (the training-budget control of its readings) and the letters of a month name
that more seeds' maps look at. Per seed and budget: which test dates come out exactly right, the step at which
each wrong one first goes wrong, the validation curve; at 300 steps also, for six ways of writing 3 March
2019, the greedy output and the input position each output row looks at hardest.
"""

from datetime import date

import torch

from attnlib.data import Pair, collate, dates_task, make_batches, render
from attnlib.seq2seq import build_model, decode_batches, greedy_exact_match
from attnlib.train import seed_everything, train

DESCRIPTION = (
    "Chapter 4's Bahdanau model on dates_task(4000, 200, 1000, seed=0), trained as the chapter trains it "
    "(Adam, lr 1e-2, cosine) for 300 and for 1,200 steps: per test date right (1) or wrong (0), the first "
    "wrong output step of each mistake ([test index, step]), the validation exact match every 50 steps "
    "(every 200 at 1,200 steps); at 300 steps, for 3 March 2019 in six formats, the output and each row's "
    "argmax."
)
SEEDS = list(range(6))
BUDGETS = (300, 1200)
FORMATS = [
    "weekday, month d, yyyy",
    "dd/mm/yyyy",
    "the dth of month yyyy",
    "d mon yy",
    "yyyymmdd",
    "wkd d mon yyyy",
]

torch.set_num_threads(1)
task = dates_task(n_train=4000, n_valid=200, n_test=1000, seed=0)
train_batches = make_batches(
    task.train, task.src_vocab, task.tgt_vocab, 64, shuffle=True, seed=0, bucket=True
)
valid_batches = make_batches(task.valid, task.src_vocab, task.tgt_vocab, len(task.valid))
test_batches = make_batches(task.test, task.src_vocab, task.tgt_vocab, 500)
references = [task.tgt_vocab.encode(p.tgt) for b in test_batches for p in b.examples]


def first_wrong_step(hyp: list[int], ref: list[int]) -> int:
    return next(t for t in range(max(len(hyp), len(ref))) if t >= min(len(hyp), len(ref)) or hyp[t] != ref[t])


def trained(seed: int, steps: int):
    seed_everything(seed)  # as the chapter: each model is built right after its seed is set
    model = build_model("bahdanau", task.src_vocab, task.tgt_vocab, emb=32, hidden=64, attn=64)
    history = train(
        model, train_batches, valid_batches, steps=steps, lr=1e-2, seed=seed, progress=False,
        eval_every=steps // 6, metric=lambda m: greedy_exact_match(m, valid_batches, task.tgt_vocab),
    )  # fmt: skip
    return model, history


def run(seed: int) -> dict:
    result = {}
    for steps in BUDGETS:
        model, history = trained(seed, steps)
        tokens = decode_batches(model, test_batches).tokens
        wrong = [i for i, (h, r) in enumerate(zip(tokens, references, strict=True)) if h != r]
        result[str(steps)] = {
            "test_right": [int(h == r) for h, r in zip(tokens, references, strict=True)],
            "mistakes": [[i, first_wrong_step(tokens[i], references[i])] for i in wrong],
            "valid_exact": history.valid_metric,
        }
        if steps == BUDGETS[0]:
            day = date(2019, 3, 3)
            examples = [Pair(src=list(render(day, fmt)), tgt=list(day.isoformat())) for fmt in FORMATS]
            out = decode_batches(model, [collate(examples, task.src_vocab, task.tgt_vocab)])
            result["maps"] = {
                fmt: {"output": "".join(task.tgt_vocab.decode(t)), "argmax": w.argmax(dim=-1).tolist()}
                for fmt, t, w in zip(FORMATS, out.tokens, out.weights, strict=True)
            }
    return result

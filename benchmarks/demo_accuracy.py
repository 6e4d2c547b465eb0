"""The two in-page models on what people type (issue 28): a written list of ordinary inputs, each with its
right answer, run through the page's own preparation (attnlib.inpage.prepare: what inpage.js reads of the
text) and the model the page holds (rebuilt from the chapter's stored output; the page computes the same
outputs within 1e-4, tests/site/test_inpage_site.py).

    .venv/bin/python benchmarks/demo_accuracy.py

Prints one line per input (right or wrong, whether the page flags it as written in none of the formats the
model learned, the model's answer) and the accuracy and number flagged per list:
- chapter 4, dates written as people write them (capitals, commas) in the 16 formats the model learned, and
  dates in formats it never saw (ISO, US month first, ...);
- chapter 8, English sentences of the toy grammar typed as people type them (a capital, a full stop or a
  question mark), each answered by the dataset's own translation, and the same sentences as the training data
  writes them (lower case, no punctuation): the page must give the same answer to both.
"""

from __future__ import annotations

import re
from pathlib import Path

from attnlib import inpage
from attnlib.inpage_file import stored_specs

ROOT = Path(__file__).resolve().parent.parent

# (typed, right answer). Christmas 2019 in each learned format, a few other days, as people write them.
DATES_LEARNED = [
    ("March 3, 2019", "2019-03-03"),
    ("3 March 2019", "2019-03-03"),
    ("Sunday, March 3, 2019", "2019-03-03"),
    ("Sunday 3 March 2019", "2019-03-03"),
    ("Sun 3 Mar 2019", "2019-03-03"),
    ("The 25th of December 2019", "2019-12-25"),
    ("December 25th, 2019", "2019-12-25"),
    ("Dec 25 2019", "2019-12-25"),
    ("2019 Dec 25", "2019-12-25"),
    ("25-Dec-2019", "2019-12-25"),
    ("25 Dec 19", "2019-12-25"),
    ("25/12/2019", "2019-12-25"),
    ("25.12.2019", "2019-12-25"),
    ("14.7.89", "1989-07-14"),
    ("01-01-00", "2000-01-01"),
    ("19690720", "1969-07-20"),
]
DATES_NOT_LEARNED = [  # formats people use that are not among the 16
    ("2019-12-25", "2019-12-25"),
    ("12/25/2019", "2019-12-25"),
    ("Dec. 25, 2019", "2019-12-25"),
    ("25 Dec, 2019", "2019-12-25"),
    ("25th December 2019", "2019-12-25"),
    ("Wednesday the 25th of December, 2019", "2019-12-25"),
]
# (typed, the dataset's translation): held-out pairs of chapter 8's data, translation_task(seed=0, n=4000)
SENTENCES = [
    ("Is the man strong?", "¿ es el hombre fuerte ?"),
    ("The women do not read the books.", "las mujeres no leen los libros"),
    ("The man has the black houses.", "el hombre tiene las casas negras"),
    ("He does not need the long books.", "él no necesita los libros largos"),
    ("You do not see the small car.", "no ves el coche pequeño"),
    ("The girl sees the white birds.", "la niña ve los pájaros blancos"),
    ("He has some small dogs.", "él tiene unos perros pequeños"),
    ("Do you want a car?", "¿ quieres un coche ?"),
    ("The woman eats a fresh cake.", "la mujer come un pastel fresco"),
    ("Does the boy see a new house?", "¿ ve el niño una casa nueva ?"),
    ("You are short.", "eres bajo"),
    ("They need some old books.", "ellos necesitan unos libros viejos"),
    ("I write the letters.", "escribo las cartas"),
    ("The man is not at school.", "el hombre no está en la escuela"),
    ("Does she read the old letter?", "¿ lee ella la carta vieja ?"),
]


def page_spec(chapter: str) -> dict:
    """The spec of the in-page model that ``chapter``'s stored output holds."""
    specs = stored_specs(ROOT / "chapters" / chapter)
    if len(specs) != 1:
        raise LookupError(f"{chapter}: {len(specs)} in-page models in its stored outputs, not one")
    return specs[0]


def answers(spec: dict, texts: list[str]) -> list[str]:
    """What the page shows for each typed text: its preparation, then greedy decoding."""
    model, src_vocab, tgt_vocab = inpage.model_from_spec(spec)
    glue = "" if spec["tokens"] == "chars" else " "
    shown = []
    for text in texts:
        tokens, _ = inpage.prepare(spec, text)
        ids, _ = inpage.python_reference(model, src_vocab, tokens)
        shown.append(glue.join(t for t in tgt_vocab.decode(ids) if not t.startswith("<")))
    return shown


def as_trained(sentence: str) -> str:
    """A typed sentence as the training data writes it: lower case, no punctuation."""
    return " ".join(re.sub(r"[?.!,]", " ", sentence).lower().split())


def flagged(spec: dict, texts: list[str]) -> list[bool]:
    """Whether the page says each typed text is in none of the formats the model learned (only a page whose
    spec lists ``formats`` says so; inpage.js flags what ``attnlib.inpage.outside_formats`` flags)."""
    return [inpage.outside_formats(spec, text) for text in texts]


def accuracy(spec: dict, pairs: list[tuple[str, str]], label: str) -> float:
    shown = answers(spec, [typed for typed, _ in pairs])
    flags = flagged(spec, [typed for typed, _ in pairs])
    right = [got == want for got, (_, want) in zip(shown, pairs, strict=True)]
    for ok, got, flag, (typed, want) in zip(right, shown, flags, pairs, strict=True):
        note = "" if ok else f" (right: {want!r})"
        mark = "right" if ok else "WRONG"
        print(f"  {mark}  flagged = {'yes' if flag else 'no '}  {typed!r:42} -> {got!r}{note}")
    print(f"{label}: {sum(right)} of {len(pairs)} right, {sum(flags)} of {len(pairs)} flagged")
    return sum(right) / len(pairs)


def main() -> None:
    dates = page_spec("04_bahdanau_attention.ipynb")
    accuracy(dates, DATES_LEARNED, "chapter 4, dates in the 16 formats it learned, as people write them")
    accuracy(dates, DATES_NOT_LEARNED, "chapter 4, dates in formats it never saw")
    words = page_spec("08_translation.ipynb")
    accuracy(words, SENTENCES, "chapter 8, sentences typed as people type them")
    plain = [(as_trained(typed), want) for typed, want in SENTENCES]
    accuracy(words, plain, "chapter 8, the same sentences as the training data writes them")


if __name__ == "__main__":
    main()

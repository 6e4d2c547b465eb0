"""The building blocks of the toy translation grammar: a sentence written in both languages at once.

English words are appended in English order; Spanish words are emitted later in Spanish order, each with the
English positions it links to, so every pair comes with its gold alignment. ``attnlib.data.translation``
builds its sentence templates from these pieces; its docstring states the alignment conventions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attnlib.data.batching import Pair
from attnlib.data.lexicon import DEFINITE, INDEFINITE, NOUNS, Adj, Noun


@dataclass(frozen=True)
class Subject:
    en: tuple[str, ...]  # ("you",) or ("the", "boys")
    person: int  # 0-4: I, you, he/she, we, they
    gender: str
    plural: bool
    es_pronoun: str | None = None  # None: dropped in Spanish (I, you, we), or a noun subject
    noun: Noun | None = None


PRONOUNS = [
    Subject(("i",), 0, "m", False),
    Subject(("you",), 1, "m", False),
    Subject(("he",), 2, "m", False, "él"),
    Subject(("she",), 2, "f", False, "ella"),
    Subject(("we",), 3, "m", True),
    Subject(("they",), 4, "m", True, "ellos"),
]


def noun_subjects(kinds: set[str]) -> list[Subject]:
    return [
        Subject(("the", n.en_pl if plural else n.en), 4 if plural else 2, n.gender, plural, None, n)
        for n in NOUNS.values()
        if n.kind in kinds
        for plural in (False, True)
    ]


@dataclass
class Sentence:
    """English tokens, and Spanish tokens each with the English positions it links to."""

    src: list[str] = field(default_factory=list)
    tgt: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)

    def en(self, *words: str) -> list[int]:
        """Append English words; return their positions."""
        self.src.extend(words)
        return list(range(len(self.src) - len(words), len(self.src)))

    def es(self, word: str, *links: int) -> None:
        """Append a Spanish word linked to the English positions ``links`` (none: unaligned)."""
        self.tgt.append((word, links))

    def pair(self) -> Pair:
        links = frozenset((t, s) for t, (_, sources) in enumerate(self.tgt) for s in sources)
        return Pair(src=list(self.src), tgt=[word for word, _ in self.tgt], alignment=links)


class NounPhrase:
    """Determiner + optional adjective + noun: written in English order, emitted later in Spanish order."""

    def __init__(self, out: Sentence, det: str, noun: Noun, plural: bool, adj: Adj | None = None) -> None:
        self.det, self.noun, self.plural, self.adj = det, noun, plural, adj
        next_word = adj.en if adj else noun.en
        self.i_det = out.en("an" if det == "a" and next_word[0] in "aeiou" else det)[0]
        self.i_adj = out.en(adj.en)[0] if adj else -1
        self.i_noun = out.en(noun.en_pl if plural else noun.en)[0]

    def emit(self, out: Sentence, personal_a: bool = False) -> None:
        agreement = (self.noun.gender, self.plural)
        article = (DEFINITE if self.det == "the" else INDEFINITE)[agreement]
        if personal_a and article == "el":
            out.es("al", self.i_det)  # a + el contracts
        else:
            if personal_a:
                out.es("a")
            out.es(article, self.i_det)
        out.es(self.noun.es_pl if self.plural else self.noun.es, self.i_noun)
        if self.adj:
            out.es(self.adj.es(*agreement), self.i_adj)  # after the noun: the crossing link


class SubjectPhrase:
    """A subject in both languages; a dropped pronoun hands its position to the verb's links."""

    def __init__(self, out: Sentence, subj: Subject) -> None:
        self.subj = subj
        self.np = NounPhrase(out, "the", subj.noun, subj.plural) if subj.noun else None
        self.i_pronoun = -1 if subj.noun else out.en(*subj.en)[0]

    def emit(self, out: Sentence) -> None:
        if self.np:
            self.np.emit(out)
        elif self.subj.es_pronoun:
            out.es(self.subj.es_pronoun, self.i_pronoun)

    def verb_links(self, *verb: int) -> tuple[int, ...]:
        """The verb's links, plus the dropped pronoun whose person the verb ending carries."""
        dropped = self.np is None and self.subj.es_pronoun is None
        return (*verb, self.i_pronoun) if dropped else verb

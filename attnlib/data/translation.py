"""A toy English -> Spanish corpus from a small grammar, every pair with its GOLD word alignment.

Real corpora have no gold alignments; this one does, so a lesson can lay the decoder's attention weights
alpha_{t,s} over the true links and measure how well attention learned to align (AER, Och & Ney 2003). The
grammar is small but the Spanish is correct, and it has what makes translation more than word lookup:

* agreement: verbs with the subject ("estoy", "estás", "están"), articles and adjectives with the noun's
  gender and number ("the red houses" -> "las casas rojas"), predicate adjectives with the subject
  ("she is tired" -> "ella está cansada");
* reordering: adjectives follow the noun ("the red house" -> "la casa roja"), a crossing alignment; in
  questions the verb comes before the subject and "todavía" (still) is fronted;
* estar (states, locations) vs ser (lasting traits): "he is tired" -> "está", "he is tall" -> "es";
* many-to-one links: "do not" -> "no"; "the" after the personal "a" contracts: "a el niño" -> "al niño";
* pro-drop: Spanish drops I / you / we, the verb ending carries the person ("are you" -> "estás").

The course's running example (note 004) is in the corpus exactly:
"are you still at home" -> "¿todavía estás en casa?", with links todavía<-still, estás<-are, estás<-you,
en<-at, casa<-home.

Tokenisation: English is lower-case words without punctuation. Spanish is lower-case words with accents, and
"¿" and "?" are tokens of their own. "you" is the informal singular "tú"; a speaker or listener whose gender
the English does not show ("I", "you", "we", "they") is masculine, the Spanish default.

Alignment conventions (links (t, s), 0-based over real tokens; only sure links):
* a dropped subject pronoun links to the verb that carries its person: estás <- you;
* "do"/"does" of a negation links with "not" to "no"; the "do"/"does" of a question has no counterpart;
* a token without a counterpart on the other side is left unaligned: "¿", "?", the personal "a", and an
  article English does not have ("at school" -> "en la escuela": "la" is unaligned).
"""

from __future__ import annotations

import functools
import random
from itertools import product

from attnlib.data.batching import Pair, Task, build_task, split
from attnlib.data.grammar import PRONOUNS, NounPhrase, Sentence, Subject, SubjectPhrase, noun_subjects
from attnlib.data.lexicon import (
    ADJECTIVES,
    BE,
    DO,
    ESTAR,
    LOCATIONS,
    NOUNS,
    SER,
    STATES,
    TRAITS,
    VERBS,
    Adj,
    Location,
    Noun,
    Verb,
)

EXAMPLE = ("are you still at home", "¿ todavía estás en casa ?")  # note 004, space-separated tokens


def copular(
    subj: Subject, complement: Adj | Location, estar: bool, still: bool, negative: bool, question: bool
) -> Pair:
    """ "(are) you (still) (not) at home / tired / tall" with ser or estar.

    English: SUBJ BE [still] [not] COMP, or BE SUBJ [still] COMP for a question.
    Spanish: [SUBJ] [todavía] [no] VERB COMP, or ¿ [todavía] VERB [SUBJ] COMP ? for a question.
    """
    out = Sentence()
    if question:
        i_be = out.en(BE[subj.person])[0]
        s = SubjectPhrase(out, subj)
    else:
        s = SubjectPhrase(out, subj)
        i_be = out.en(BE[subj.person])[0]
    i_still = out.en("still")[0] if still else -1
    i_not = out.en("not")[0] if negative else -1
    i_comp = out.en(*([complement.en] if isinstance(complement, Adj) else complement.en))
    if question:
        out.es("¿")
    else:
        s.emit(out)
    if still:
        out.es("todavía", i_still)
    if negative:
        out.es("no", i_not)
    out.es((ESTAR if estar else SER)[subj.person], *s.verb_links(i_be))
    if question:
        s.emit(out)
    if isinstance(complement, Adj):
        out.es(complement.es(subj.gender, subj.plural), *i_comp)
    else:
        links = dict(complement.links)
        for j, word in enumerate(complement.es):
            out.es(word, *([i_comp[links[j]]] if j in links else []))
    if question:
        out.es("?")
    return out.pair()


def transitive(
    subj: Subject, verb: Verb, obj: tuple[str, Noun, bool, Adj | None], negative: bool, question: bool
) -> Pair:
    """ "(do) he (does not) read(s) the new books" -> "(¿) (él) (no) lee los libros nuevos (?)".

    ``obj`` is (determiner "the"/"a"/"some", noun, plural, adjective or None).
    """
    out = Sentence()
    if question:
        out.en(DO[subj.person])  # no Spanish counterpart: the question shows in ¿ … ? and word order
    s = SubjectPhrase(out, subj)
    i_do_not = out.en(DO[subj.person], "not") if negative else []
    base_form = question or negative or subj.person != 2
    i_verb = out.en(verb.en if base_form else verb.en_3sg)[0]
    det, noun, plural, adj = obj
    np = NounPhrase(out, det, noun, plural, adj)
    if question:
        out.es("¿")
    else:
        s.emit(out)
    if negative:
        out.es("no", *i_do_not)
    out.es(verb.es[subj.person], *s.verb_links(i_verb))
    if question:
        s.emit(out)
    np.emit(out, personal_a=verb.personal_a and noun.kind == "person")
    if question:
        out.es("?")
    return out.pair()


@functools.cache
def _all_pairs() -> tuple[Pair, ...]:
    """Every sentence of the grammar, in a fixed order (built once: it takes about half a second)."""
    pairs = []
    for subj in PRONOUNS + noun_subjects({"person", "animal"}):
        kind = subj.noun.kind if subj.noun else "person"
        asks = subj.person not in (0, 3)  # no questions about "I" or "we"
        with_estar = [c for c in LOCATIONS + STATES if kind in c.kinds]
        with_ser = [a for a in TRAITS if kind in a.kinds]
        for comp, estar in [(c, True) for c in with_estar] + [(a, False) for a in with_ser]:
            for still, negative in product((False, True) if estar else (False,), (False, True)):
                pairs.append(copular(subj, comp, estar, still, negative, question=False))
                if asks and not negative:
                    pairs.append(copular(subj, comp, estar, still, negative, question=True))
    for subj in PRONOUNS + noun_subjects({"person"}):
        asks = subj.person not in (0, 3)
        for verb in VERBS:
            for noun in (NOUNS[name] for name in verb.objects):
                for adj in [None] + [a for a in ADJECTIVES if noun.kind in a.kinds]:
                    for det, plural in (("the", False), ("the", True), ("a", False), ("some", True)):
                        obj = (det, noun, plural, adj)
                        pairs.append(transitive(subj, verb, obj, negative=False, question=False))
                        if det == "the":  # "I do not have a car" is "no tengo coche", outside this grammar
                            pairs.append(transitive(subj, verb, obj, negative=True, question=False))
                        if asks and det != "some":
                            pairs.append(transitive(subj, verb, obj, negative=False, question=True))
    return tuple(pairs)


def make_translation_pairs(seed: int = 0, n: int | None = None) -> list[Pair]:
    """The whole corpus in an order fixed by ``seed``; with ``n``, a seeded sample of ``n`` distinct pairs.

    The example of note 004, "are you still at home", is always in it. The pairs are shared between calls:
    treat them as read-only.
    """
    pairs = list(_all_pairs())
    random.Random(seed).shuffle(pairs)
    if n is None or n >= len(pairs):
        return pairs
    sample = pairs[:n]
    if not any(" ".join(p.src) == EXAMPLE[0] for p in sample):
        sample[-1] = next(p for p in pairs if " ".join(p.src) == EXAMPLE[0])
    return sample


def translation_task(
    seed: int = 0, fractions: tuple[float, float, float] = (0.8, 0.1, 0.1), n: int | None = None
) -> Task:
    """Train/valid/test splits of the corpus (``n`` pairs, default all) and vocabularies built from train."""
    return build_task(split(make_translation_pairs(seed, n), fractions, seed))

"""Specification of attnlib.data.translation: the toy English -> Spanish corpus and its gold alignments."""

import pytest

from attnlib.data.translation import make_translation_pairs, translation_task


@pytest.fixture(scope="module")
def pairs():
    return make_translation_pairs(seed=0)


@pytest.fixture(scope="module")
def corpus(pairs):
    """English sentence -> Pair."""
    return {" ".join(p.src): p for p in pairs}


def spanish(corpus, english: str) -> str:
    return " ".join(corpus[english].tgt)


def crosses(alignment) -> bool:
    return any(t1 < t2 and s1 > s2 for t1, s1 in alignment for t2, s2 in alignment)


def test_contains_the_notes_example_exactly_with_its_alignment(corpus):
    pair = corpus["are you still at home"]
    assert pair.src == ["are", "you", "still", "at", "home"]
    assert pair.tgt == ["¿", "todavía", "estás", "en", "casa", "?"]
    # todavía <- still, estás <- are + you (the dropped pronoun), en <- at, casa <- home; ¿ ? unaligned
    assert pair.alignment == frozenset({(1, 2), (2, 0), (2, 1), (3, 3), (4, 4)})


def test_has_at_least_3000_distinct_pairs(pairs):
    assert len({(tuple(p.src), tuple(p.tgt)) for p in pairs}) >= 3000


def test_every_english_sentence_has_one_translation(pairs, corpus):
    assert len(corpus) == len(pairs)


def test_alignment_indices_are_in_range(pairs):
    for p in pairs:
        assert all(0 <= t < len(p.tgt) and 0 <= s < len(p.src) for t, s in p.alignment), p


def test_every_word_is_aligned_except_documented_function_words(pairs):
    unaligned_es = {"¿", "?", "a", "la", "el"}  # punctuation, personal "a", articles English lacks
    unaligned_en = {"do", "does"}  # the auxiliary of a question
    for p in pairs:
        aligned_t = {t for t, _ in p.alignment}
        aligned_s = {s for _, s in p.alignment}
        assert {w for t, w in enumerate(p.tgt) if t not in aligned_t} <= unaligned_es, p
        assert {w for s, w in enumerate(p.src) if s not in aligned_s} <= unaligned_en, p


def test_has_crossing_alignments(pairs, corpus):
    assert crosses(corpus["i see the red house"].alignment)
    assert sum(crosses(p.alignment) for p in pairs) >= 1000


def test_adjectives_follow_the_noun_and_agree(corpus):
    assert spanish(corpus, "i see the red house") == "veo la casa roja"
    assert spanish(corpus, "i see the red houses") == "veo las casas rojas"
    assert spanish(corpus, "we have some white cats") == "tenemos unos gatos blancos"
    assert spanish(corpus, "she writes a long letter") == "ella escribe una carta larga"


def test_red_house_alignment_crosses(corpus):
    pair = corpus["i see the red houses"]  # veo las casas rojas
    assert pair.alignment == frozenset({(0, 0), (0, 1), (1, 2), (2, 4), (3, 3)})


def test_verbs_agree_with_the_subject(corpus):
    assert spanish(corpus, "they read the book") == "ellos leen el libro"
    assert spanish(corpus, "the girls eat an apple") == "las niñas comen una manzana"
    assert spanish(corpus, "we are at home") == "estamos en casa"


def test_estar_for_states_and_places_ser_for_traits(corpus):
    assert spanish(corpus, "she is tired") == "ella está cansada"
    assert spanish(corpus, "she is tall") == "ella es alta"
    assert spanish(corpus, "the dogs are in the garden") == "los perros están en el jardín"
    assert spanish(corpus, "the boys are young") == "los niños son jóvenes"


def test_personal_a_contracts_with_el(corpus):
    assert spanish(corpus, "i see the boy") == "veo al niño"
    assert spanish(corpus, "i see the girl") == "veo a la niña"
    assert corpus["i see the boy"].alignment == frozenset({(0, 0), (0, 1), (1, 2), (2, 3)})


def test_do_not_aligns_many_to_one_to_no(corpus):
    pair = corpus["he does not read the book"]
    assert " ".join(pair.tgt) == "él no lee el libro"
    assert {s for t, s in pair.alignment if t == 1} == {1, 2}  # no <- does, not


def test_questions_invert_and_front_todavia(corpus):
    assert spanish(corpus, "is she still at school") == "¿ todavía está ella en la escuela ?"
    assert spanish(corpus, "does the man read the newspaper") == "¿ lee el hombre el periódico ?"
    assert spanish(corpus, "do you have an old car") == "¿ tienes un coche viejo ?"


def test_negation_and_still(corpus):
    assert spanish(corpus, "he is not at work") == "él no está en el trabajo"
    assert spanish(corpus, "i am still not ready") == "todavía no estoy listo"


def test_english_article_an_before_a_vowel(pairs):
    for p in pairs:
        for det, word in zip(p.src, p.src[1:], strict=False):
            if det in ("a", "an"):
                assert (det == "an") == (word[0] in "aeiou"), p.src


def test_same_seed_same_order_different_seed_different_order():
    assert make_translation_pairs(seed=1)[:50] == make_translation_pairs(seed=1)[:50]
    assert make_translation_pairs(seed=1)[:50] != make_translation_pairs(seed=2)[:50]


def test_a_sample_of_n_keeps_the_example():
    sample = make_translation_pairs(seed=5, n=200)
    assert len(sample) == 200 == len({tuple(p.src) for p in sample})
    assert ["are", "you", "still", "at", "home"] in [p.src for p in sample]


def test_translation_task_splits_are_disjoint_and_cover_the_corpus():
    task = translation_task(seed=0, fractions=(0.8, 0.1, 0.1), n=3000)
    sizes = (len(task.train), len(task.valid), len(task.test))
    assert sizes == (2400, 300, 300)
    sources = [{tuple(p.src) for p in part} for part in (task.train, task.valid, task.test)]
    assert len(set().union(*sources)) == sum(sizes)
    assert "¿" in task.tgt_vocab and "casa" in task.tgt_vocab and "home" in task.src_vocab

"""The English-Spanish word lists behind the toy translation corpus (:mod:`attnlib.data.translation`).

Each word carries what Spanish agreement needs: nouns their gender and plural, adjectives their four forms
(masculine/feminine x singular/plural), verbs their present tense in five persons. A noun's ``kind`` (person,
animal, thing, plant, text, food) says which adjectives and verbs make sense with it, so that the grammar
says "the red house" and "the tall girl" but never "the tall house" or "I eat the book".

Persons are indexed 0-4: I, you (informal singular "tú"), he/she, we, they.
"""

from __future__ import annotations

from dataclasses import dataclass

BE = ("am", "are", "is", "are", "are")
DO = ("do", "do", "does", "do", "do")
SER = ("soy", "eres", "es", "somos", "son")  # lasting traits: "es alto"
ESTAR = ("estoy", "estás", "está", "estamos", "están")  # states and locations: "está cansado", "está en casa"
DEFINITE = {("m", False): "el", ("f", False): "la", ("m", True): "los", ("f", True): "las"}
INDEFINITE = {("m", False): "un", ("f", False): "una", ("m", True): "unos", ("f", True): "unas"}


@dataclass(frozen=True)
class Noun:
    en: str
    en_pl: str
    es: str
    es_pl: str
    gender: str  # "m" or "f"
    kind: str  # person, animal, thing, plant, text, food


@dataclass(frozen=True)
class Adj:
    en: str
    forms: tuple[str, ...]  # masculine singular, feminine singular, masculine plural, feminine plural
    kinds: frozenset[str]

    def es(self, gender: str, plural: bool) -> str:
        """The form that agrees with a noun of ``gender`` ("m"/"f") and number."""
        return self.forms[2 * plural + (gender == "f")]


@dataclass(frozen=True)
class Verb:
    en: str
    en_3sg: str
    es: tuple[str, ...]  # present tense, one form per person 0-4
    objects: tuple[str, ...]  # the English nouns it takes as objects
    personal_a: bool = False  # Spanish marks a person as direct object with "a": "veo a la niña"


@dataclass(frozen=True)
class Location:
    en: tuple[str, ...]
    es: tuple[str, ...]
    links: tuple[tuple[int, int], ...]  # (Spanish index, English index) inside the phrase
    kinds: frozenset[str]


def _noun(words: str) -> Noun:
    en, en_pl, es, es_pl, gender, kind = words.split()
    return Noun(en, en_pl, es, es_pl, gender, kind)


def _adj(en: str, forms: str, kinds: str) -> Adj:
    return Adj(en, tuple(forms.split()), frozenset(kinds.split()))


def _verb(en: str, es: str, objects: str, personal_a: bool = False) -> Verb:
    base, third = en.split()
    return Verb(base, third, tuple(es.split()), tuple(objects.split()), personal_a)


def _location(en: str, es: str, links: str, kinds: str) -> Location:
    pairs = tuple((int(t), int(s)) for t, s in (link.split("-") for link in links.split()))
    return Location(tuple(en.split()), tuple(es.split()), pairs, frozenset(kinds.split()))


NOUNS = {
    n.en: n
    for n in map(
        _noun,
        [
            "man men hombre hombres m person",
            "woman women mujer mujeres f person",
            "boy boys niño niños m person",
            "girl girls niña niñas f person",
            "dog dogs perro perros m animal",
            "cat cats gato gatos m animal",
            "bird birds pájaro pájaros m animal",
            "car cars coche coches m thing",
            "house houses casa casas f thing",
            "key keys llave llaves f thing",
            "tree trees árbol árboles m plant",
            "book books libro libros m text",
            "letter letters carta cartas f text",
            "newspaper newspapers periódico periódicos m text",
            "magazine magazines revista revistas f text",
            "apple apples manzana manzanas f food",
            "orange oranges naranja naranjas f food",
            "cake cakes pastel pasteles m food",
            "egg eggs huevo huevos m food",
        ],
    )
}
# Attributive adjectives; Spanish puts them after the noun.
ADJECTIVES = [
    _adj("red", "rojo roja rojos rojas", "thing"),
    _adj("white", "blanco blanca blancos blancas", "thing animal"),
    _adj("black", "negro negra negros negras", "thing animal"),
    _adj("new", "nuevo nueva nuevos nuevas", "thing text"),
    _adj("old", "viejo vieja viejos viejas", "thing text plant"),
    _adj("big", "grande grande grandes grandes", "thing food animal plant"),
    _adj("small", "pequeño pequeña pequeños pequeñas", "thing food animal plant"),
    _adj("long", "largo larga largos largas", "text"),
    _adj("short", "corto corta cortos cortas", "text"),  # length; a short person is "bajo"
    _adj("interesting", "interesante interesante interesantes interesantes", "text"),
    _adj("fresh", "fresco fresca frescos frescas", "food"),
    _adj("tall", "alto alta altos altas", "person"),
    _adj("short", "bajo baja bajos bajas", "person"),
    _adj("young", "joven joven jóvenes jóvenes", "person animal"),
    _adj("rich", "rico rica ricos ricas", "person"),
]
# Predicate adjectives: lasting traits take ser ...
TRAITS = [a for a in ADJECTIVES if "person" in a.kinds] + [
    _adj("kind", "amable amable amables amables", "person"),
    _adj("smart", "inteligente inteligente inteligentes inteligentes", "person"),
    _adj("strong", "fuerte fuerte fuertes fuertes", "person"),
    _adj("big", "grande grande grandes grandes", "animal"),
    _adj("small", "pequeño pequeña pequeños pequeñas", "animal"),
]
# ... states take estar.
STATES = [
    _adj("tired", "cansado cansada cansados cansadas", "person animal"),
    _adj("sick", "enfermo enferma enfermos enfermas", "person animal"),
    _adj("busy", "ocupado ocupada ocupados ocupadas", "person"),
    _adj("ready", "listo lista listos listas", "person"),  # "ser listo" would mean clever
    _adj("sad", "triste triste tristes tristes", "person"),
    _adj("angry", "enfadado enfadada enfadados enfadadas", "person"),
    _adj("bored", "aburrido aburrida aburridos aburridas", "person"),  # "ser aburrido" = boring
]
# "at school" has no English article, so "la" in "en la escuela" stays unaligned.
LOCATIONS = [
    _location("at home", "en casa", "0-0 1-1", "person animal"),
    _location("at school", "en la escuela", "0-0 2-1", "person"),
    _location("at work", "en el trabajo", "0-0 2-1", "person"),
    _location("in the park", "en el parque", "0-0 1-1 2-2", "person animal"),
    _location("in the kitchen", "en la cocina", "0-0 1-1 2-2", "person animal"),
    _location("in the garden", "en el jardín", "0-0 1-1 2-2", "person animal"),
    _location("at the beach", "en la playa", "0-0 1-1 2-2", "person"),
    _location("in the library", "en la biblioteca", "0-0 1-1 2-2", "person"),
    _location("at the station", "en la estación", "0-0 1-1 2-2", "person"),
]
VERBS = [
    _verb("have has", "tengo tienes tiene tenemos tienen", "car house key dog cat"),
    _verb("see sees", "veo ves ve vemos ven", "house car tree bird boy girl", personal_a=True),
    _verb("eat eats", "como comes come comemos comen", "apple orange cake egg"),
    _verb("read reads", "leo lees lee leemos leen", "book letter newspaper magazine"),
    _verb("want wants", "quiero quieres quiere queremos quieren", "car house cake"),
    _verb("buy buys", "compro compras compra compramos compran", "car book apple"),
    _verb("write writes", "escribo escribes escribe escribimos escriben", "letter book"),
    _verb("need needs", "necesito necesitas necesita necesitamos necesitan", "key book"),
]

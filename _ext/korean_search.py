"""Sphinx extension: the Korean site's search finds a word however a particle is glued to it.

Sphinx 7.4.7 has no search language for ``ko``: it falls back to English, whose splitter indexes whole words
(``\\w+``), so "어텐션은" is indexed as itself and a search for 어텐션 misses every page that only writes it
with a particle (the search page's partial match only runs when the exact word is in no page at all, and
never for words of two letters). This search language indexes each Korean word as written and also without
its particle (조사: 은/는, 이/가, 을/를, 의, 에서, 으로 ...), so 어텐션 finds "어텐션은" and "어텐션의".
English words in Korean pages are stemmed as on the English site (the English stemmer, in Python and in the
search page's JavaScript, leaves Hangul as it is).
"""

from __future__ import annotations

import re

from sphinx.search.en import SearchEnglish

# Longest first: the first that matches is removed.
PARTICLES = sorted(
    """은 는 이 가 을 를 의 에 와 과 도 만 로 으로 에서 에게 에는 에도
    에서는 에서의 으로는 으로서 으로써 로서 로써 로는 와의 과의 와는 과는
    까지 부터 보다 처럼 마다 이나 나 이란 란 이라는 라는 이며 이고 이다
    입니다 이므로 에게서 께서 조차 밖에 이라도 라도 은데 인데 인 들 들은
    들이 들을 들의""".split(),
    key=len,
    reverse=True,
)
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def without_particle(word: str) -> str | None:
    """``word`` less the particle glued to its end, or None when none is (or nothing would be left)."""
    for particle in PARTICLES:
        if word.endswith(particle):
            stem = word[: -len(particle)]
            # keep a one-syllable Korean noun out: "이" alone would match every word ending in 이
            if len(stem) >= 2 or (stem and not HANGUL.search(stem)):
                return stem
    return None


class SearchKorean(SearchEnglish):
    lang = "ko"
    language_name = "Korean"

    def split(self, input: str) -> list[str]:
        words = []
        for word in super().split(input):
            words.append(word)
            if HANGUL.search(word[-1:]) and (stem := without_particle(word)):
                words.append(stem)
        return words


def setup(app):
    app.add_search_language(SearchKorean)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

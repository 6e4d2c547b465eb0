"""Real sentences: the Tatoeba English-Spanish pairs of TensorFlow's "NMT with attention" tutorial.

The file ``spa.txt`` (from manythings.org/anki, sentences from tatoeba.org, CC-BY 2.0 France) has one pair a
line, English TAB Spanish, and in newer releases a third column with the attribution:

    Go.\tVe.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #4986655 (cueyayotl)

Normalisation follows the tutorial, so that results can be compared with it: Unicode NFKD, lower case, keep
only a-z, space and the punctuation . ? ! , ¿ ¡ (so accents and digits are dropped: "¿Todavía estás en
casa?" -> "¿ todavia estas en casa ?"), and put spaces around punctuation so it becomes tokens of its own.
The tutorial's whitelist has ¿ but not ¡; we keep both, as Spanish needs them.

With no ``path``, :func:`load_tatoeba` downloads the tutorial's zip once into a cache folder (standard
library only) and checks its SHA-256 when one is given.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import unicodedata
import urllib.request
import zipfile
from pathlib import Path

from attnlib.data.batching import Pair

URL = "https://storage.googleapis.com/download.tensorflow.org/data/spa-eng.zip"
PUNCTUATION = ".?!,¿¡"
_NOT_KEPT = re.compile(f"[^ a-z{re.escape(PUNCTUATION)}]")
_PUNCT = re.compile(f"([{re.escape(PUNCTUATION)}])")


def default_cache_dir() -> Path:
    """``$ATTNLIB_DATA`` if set, else ``~/.cache/attnlib``."""
    return Path(os.environ.get("ATTNLIB_DATA", Path.home() / ".cache" / "attnlib"))


def normalize(text: str) -> list[str]:
    """Tokens of ``text`` after the tutorial's normalisation: "¿Qué?" -> ["¿", "que", "?"]."""
    text = unicodedata.normalize("NFKD", text).lower()  # "á" -> "a" + combining accent, dropped next
    text = _NOT_KEPT.sub("", text)
    return _PUNCT.sub(r" \1 ", text).split()


def parse_lines(lines: list[str], source: str = "<lines>", max_pairs: int | None = None) -> list[Pair]:
    """Pairs (English source, Spanish target) from lines in the ``spa.txt`` format.

    Raises:
        ValueError: naming ``source`` and the 1-based line number, for a line without a tab or with an
            empty English or Spanish side.
    """
    pairs = []
    for number, line in enumerate(lines, start=1):
        if max_pairs is not None and len(pairs) >= max_pairs:
            break
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) < 2:
            raise ValueError(
                f"{source}, line {number}: expected 'English<TAB>Spanish', found no tab: {line!r}"
            )
        english, spanish = fields[0].strip(), fields[1].strip()
        if not english or not spanish:
            side = "English" if not english else "Spanish"
            raise ValueError(f"{source}, line {number}: the {side} side is empty: {line!r}")
        pairs.append(Pair(src=normalize(english), tgt=normalize(spanish)))
    return pairs


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check(path: Path, sha256: str | None) -> None:
    if sha256 is not None and (got := _sha256(path)) != sha256.lower():
        raise ValueError(f"checksum mismatch for {path}: expected sha256 {sha256.lower()}, got {got}")


def download(url: str = URL, cache_dir: str | Path | None = None, sha256: str | None = None) -> Path:
    """Path of ``url``'s file in ``cache_dir``, downloading it only if it is not there yet.

    The file is written under a temporary name and moved into place only after the checksum (if given) has
    matched, so an interrupted or corrupted download never poisons the cache. A cached file is checked again
    on every call when ``sha256`` is given.
    """
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = cache / url.rstrip("/").rsplit("/", 1)[-1]
    if not target.exists():
        cache.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        with urllib.request.urlopen(url) as response, partial.open("wb") as f:
            while block := response.read(1 << 20):
                f.write(block)
        try:
            _check(partial, sha256)
        except ValueError:
            partial.unlink()
            raise
        partial.replace(target)
    else:
        _check(target, sha256)
    return target


def _read_text(path: Path) -> str:
    """The text of ``spa.txt``, or of the member ending in ``spa.txt`` inside a zip."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [name for name in archive.namelist() if name.endswith("spa.txt")]
            if not names:
                raise ValueError(f"{path} has no member named spa.txt (members: {archive.namelist()})")
            with archive.open(names[0]) as member:
                return io.TextIOWrapper(member, encoding="utf-8").read()
    return path.read_text(encoding="utf-8")


def load_tatoeba(
    path: str | Path | None = None,
    *,
    url: str = URL,
    cache_dir: str | Path | None = None,
    sha256: str | None = None,
    max_pairs: int | None = None,
) -> list[Pair]:
    """English -> Spanish pairs from ``spa.txt`` (or its zip), in file order, without alignments.

    Args:
        path: a local ``spa.txt`` or zip. None: download ``url`` once into ``cache_dir``.
        sha256: expected SHA-256 of the file (downloaded or local); a mismatch raises ``ValueError`` naming
            the expected and the actual digest.
        max_pairs: read only the first ``max_pairs`` lines (the file is sorted from short to long sentences).
    """
    if path is None:
        file = download(url, cache_dir, sha256)
    else:
        file = Path(path)
        _check(file, sha256)
    # split("\n"), not splitlines(): the latter also breaks at rare Unicode separators and shifts line numbers
    lines = _read_text(file).split("\n")
    if lines[-1] == "":
        lines.pop()
    return parse_lines(lines, source=str(file), max_pairs=max_pairs)

"""Specification of attnlib.data.tatoeba. No test touches the network: downloads go to a fake urlopen.

Fixtures (written for these tests, in the exact layout of the real spa.txt, attribution numbers made up):
``spa_sample.txt`` has 30 valid lines, two of them in the older two-column layout; ``spa_malformed.txt``
separates the columns of its line 5 with spaces instead of tabs.
"""

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from attnlib.data import tatoeba
from attnlib.data.tatoeba import load_tatoeba, normalize, parse_lines

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = FIXTURES / "spa_sample.txt"
URL = "https://example.org/data/spa-eng.zip"


def zipped_sample() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(SAMPLE, "spa-eng/spa.txt")
    return buffer.getvalue()


class FakeUrlopen:
    """Stands in for urllib.request.urlopen: serves ``payload`` and counts the calls."""

    def __init__(self, payload: bytes) -> None:
        self.payload, self.calls = payload, []

    def __call__(self, url, *args, **kwargs):
        self.calls.append(url)
        return io.BytesIO(self.payload)


@pytest.fixture
def fake_download(monkeypatch):
    fake = FakeUrlopen(zipped_sample())
    monkeypatch.setattr(tatoeba.urllib.request, "urlopen", fake)
    return fake


def test_parses_every_line_of_the_fixture():
    pairs = load_tatoeba(SAMPLE)
    assert len(pairs) == 30
    assert (pairs[0].src, pairs[0].tgt) == (["go", "."], ["ve", "."])
    assert all(p.alignment is None for p in pairs)


def test_attribution_column_is_optional():
    pairs = load_tatoeba(SAMPLE)
    assert (pairs[2].src, pairs[2].tgt) == (["wait", "."], ["espera", "."])  # a two-column line


def test_normalisation_follows_the_tf_tutorial():
    assert normalize("¿Todavía estás en casa?") == ["¿", "todavia", "estas", "en", "casa", "?"]
    assert normalize("I'm home.") == ["im", "home", "."]
    assert normalize("¡Corre!") == ["¡", "corre", "!"]
    assert normalize("Mi abuela nació en 1950.") == ["mi", "abuela", "nacio", "en", "."]  # digits dropped


def test_malformed_line_is_rejected_with_file_and_line_number():
    with pytest.raises(ValueError, match=r"spa_malformed\.txt, line 5: .*no tab"):
        load_tatoeba(FIXTURES / "spa_malformed.txt")


def test_empty_side_is_rejected_with_line_number():
    with pytest.raises(ValueError, match=r"mem, line 2: the Spanish side is empty"):
        parse_lines(["Go.\tVe.", "Run!\t \tCC-BY 2.0 (France)"], source="mem")


def test_max_pairs_reads_only_the_first_lines():
    assert [p.src for p in load_tatoeba(SAMPLE, max_pairs=2)] == [["go", "."], ["run", "!"]]


def test_reads_the_zip_as_well_as_the_text(tmp_path):
    archive = tmp_path / "spa-eng.zip"
    archive.write_bytes(zipped_sample())
    assert load_tatoeba(archive) == load_tatoeba(SAMPLE)


def test_first_call_downloads_second_uses_the_cache(tmp_path, fake_download):
    first = load_tatoeba(url=URL, cache_dir=tmp_path)
    second = load_tatoeba(url=URL, cache_dir=tmp_path)
    assert fake_download.calls == [URL]
    assert (tmp_path / "spa-eng.zip").exists()
    assert first == second == load_tatoeba(SAMPLE)


def test_matching_checksum_is_accepted(tmp_path, fake_download):
    digest = hashlib.sha256(zipped_sample()).hexdigest()
    assert len(load_tatoeba(url=URL, cache_dir=tmp_path, sha256=digest)) == 30


def test_wrong_checksum_names_expected_and_got_and_caches_nothing(tmp_path, fake_download):
    wrong = "0" * 64
    got = hashlib.sha256(zipped_sample()).hexdigest()
    with pytest.raises(ValueError, match=f"expected sha256 {wrong}, got {got}"):
        load_tatoeba(url=URL, cache_dir=tmp_path, sha256=wrong)
    assert list(tmp_path.iterdir()) == []


def test_corrupted_cache_is_detected(tmp_path, fake_download):
    load_tatoeba(url=URL, cache_dir=tmp_path)
    (tmp_path / "spa-eng.zip").write_bytes(b"not the archive")
    with pytest.raises(ValueError, match="checksum mismatch"):
        load_tatoeba(url=URL, cache_dir=tmp_path, sha256=hashlib.sha256(zipped_sample()).hexdigest())
    assert len(fake_download.calls) == 1

"""Draw the course's architecture diagrams: figures/diagrams/<name>.svg (the website) and <name>.png (Colab),
and the Korean edition's, with the same drawing and Korean words, in ko/figures/diagrams/.

    python tools/diagrams.py           # (re)draw every diagram, in every language
    python tools/diagrams.py --check   # exit 1 and list the diagrams that are missing or out of date
    python tools/diagrams.py seq2seq   # one diagram (in every language)

Each diagram is a few boxes and arrows placed by hand in inch coordinates, with the course's notation
(notation.md) as matplotlib mathtext. One colour per role, the same in every diagram: encoder (blue),
decoder (orange), attention (green), everything else (grey). The files are byte-for-byte reproducible
(fixed ``svg.hashsalt``, no date or software metadata), so ``--check`` can compare them. The PNG twin
exists because Colab shows no SVG image in Markdown (googlecolab/colabtools#2092);
tools/colab_edition.py inlines it there.

The words of the diagrams are in diagramlib/words.py, one table per language, keyed by an English id; the
drawing code holds none. The Korean diagrams set their Hangul in NanumGothic, from a pinned PyPI package
(diagramlib/canvas.py, ``korean_font``).
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable
from pathlib import Path

import generated
import matplotlib
import matplotlib.pyplot as plt
from diagramlib import attention, recurrent, scaling
from diagramlib.canvas import ROLES, style  # noqa: F401 (ROLES: the tests read the colours)
from diagramlib.words import WORDS

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ("en", "ko")
# language -> the folder of its diagrams (the Korean pages are generated under ko/, tools/i18n.py)
OUT = {"en": ROOT / "figures" / "diagrams", "ko": ROOT / "ko" / "figures" / "diagrams"}
PNG_DPI = 130

# name -> the function that draws it from its words (WORDS[language][name])
DIAGRAMS: dict[str, Callable[[dict[str, str]], plt.Figure]] = {
    "rnn-unrolled": recurrent.rnn_unrolled,
    "gru-cell": recurrent.gru_cell,
    "seq2seq": recurrent.seq2seq,
    "dot-product": attention.dot_product,
    "bahdanau-luong": attention.bahdanau_luong,
    "bahdanau-unrolled": attention.bahdanau_unrolled,
    "online-softmax": scaling.online_softmax,
    "transformer": scaling.transformer,
    "kv-cache": scaling.kv_cache,
}


def compact(svg: bytes) -> bytes:
    """The SVG without indentation, its coordinates rounded to 1/100 (of a point, or of a glyph unit)."""
    text = re.sub(r"\n +", "\n", svg.decode())
    # scales (below 1) keep 4 decimals: a glyph's size must not drift against its position
    text = re.sub(
        r"(?<![\w.])(-?\d+\.\d{3,})", lambda m: f"{float(m[1]):.{2 if abs(float(m[1])) >= 1 else 4}f}", text
    )
    return text.encode()


def render(name: str, language: str = "en") -> dict[str, bytes]:
    """{".svg": bytes, ".png": bytes} of one diagram in one language."""
    with matplotlib.rc_context(style(language)):
        fig = DIAGRAMS[name](WORDS[language][name])
        files = {}
        for suffix, options in (
            (".svg", {"metadata": {"Date": None}}),
            (".png", {"dpi": PNG_DPI, "metadata": {"Software": None}}),
        ):
            buffer = io.BytesIO()
            fig.savefig(buffer, format=suffix[1:], **options)
            files[suffix] = compact(buffer.getvalue()) if suffix == ".svg" else buffer.getvalue()
        plt.close(fig)
    return files


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def write(
    check: bool = False, names: list[str] | None = None, languages: tuple[str, ...] = LANGUAGES
) -> list[Path]:
    """Draw (or with ``check`` only find) the diagram files that are missing or out of date; return them."""
    unknown = sorted(set(names or ()) - set(DIAGRAMS))
    if unknown:
        raise SystemExit(f"diagrams: no diagram named {', '.join(unknown)} (there are {', '.join(DIAGRAMS)})")
    stale = []
    for language in languages:
        for name in names or DIAGRAMS:
            for suffix, data in render(name, language).items():
                target = OUT[language] / f"{name}{suffix}"
                if generated.update(target, data, check):
                    stale.append(target)
                    if not check:
                        print(f"written: {_shown(target)} ({len(data) / 1024:.1f} kB)")
    return stale


def main(argv: list[str]) -> int:
    check = "--check" in argv
    try:
        stale = write(check=check, names=[a for a in argv if not a.startswith("--")] or None)
    except RuntimeError as error:  # the Korean font is missing or not the pinned file
        raise SystemExit(f"diagrams: {error}") from None
    if check:
        return generated.report([_shown(t) for t in stale], "python tools/diagrams.py")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The learner's trained model as a small file that the chapter's page runs in the browser.

    path = export(model, src_vocab, tgt_vocab, "my-dates-model.json", task="dates")
    offer(path)                     # prints its name and size; in Colab, downloads it
    model, src_vocab, tgt_vocab = read(path)      # back in Python
    [page_spec] = stored_specs("chapters/04_bahdanau_attention.ipynb")   # the model a chapter's page holds

The file is :func:`attnlib.inpage.spec`'s JSON (the config, both vocabularies, every weight as float32 in
base64) with a format marker, a version and the task. The page's "load your own model" control reads it from
the reader's disk with FileReader (nothing is uploaded) and ``inpage_load.js`` checks it before the engine
runs it: the marker, the version, the page's task, a config the engine runs, every parameter's shape against
the config, each base64 string's length against its shape, finite values, the vocabularies' sizes, the size.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from attnlib.inpage import model_from_spec, spec

FORMAT, VERSION = "attnlib-inpage-model", 1  # inpage_load.js's FORMAT, VERSION
MAX_BYTES = 8 * 1024 * 1024  # inpage_load.js's MAX_BYTES: the largest file a page reads
STORED_SPEC = re.compile(r'class="inpage-spec">(.*?)</script>', re.S)  # in the HTML that inpage.demo writes


def export(model, src_vocab, tgt_vocab, path, task: str, tokens: str = "chars", **preparing) -> Path:
    """Write ``model`` to ``path`` (JSON) for the page of ``task`` (the page's: ``"dates"``,
    ``"toy-translation"``). ``tokens`` and ``preparing`` as :func:`attnlib.inpage.spec` takes them (the page
    prepares typed text as its own demo does). Returns the path.
    """
    if not isinstance(task, str) or not task:
        raise ValueError(f"task must name what the model was trained for, as its page does; got {task!r}")
    model_spec = spec(model, src_vocab, tgt_vocab, tokens, task=task, **preparing)
    text = json.dumps({"format": FORMAT, "version": VERSION, **model_spec}, separators=(",", ":"))
    size = len(text.encode())
    if size > MAX_BYTES:
        raise ValueError(f"the model file would be {size:,} bytes; a page reads at most {MAX_BYTES:,}")
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return path


def offer(path) -> None:
    """Say which file was written and how big; in Colab, also download it to the reader's computer."""
    path = Path(path)
    print(f"wrote {path.name} ({path.stat().st_size / 1024:,.0f} KB)")
    try:
        from google.colab import files  # only in Colab
    except ImportError:
        return
    files.download(str(path))


def read(path, task: str | None = None):
    """The model a file holds, rebuilt in Python: ``(model, src_vocab, tgt_vocab)``. ``task``: the one it must
    be for (any if None). A file that is not such a model raises ValueError naming what is wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not JSON, so not a model file written by export: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path} is not a model file written by attnlib.inpage_file.export")
    if data.get("version") != VERSION:
        raise ValueError(f"{path} has version {data.get('version')!r}; this attnlib reads {VERSION}")
    if task is not None and data.get("task") != task:
        raise ValueError(f"{path} holds a model for the task {data.get('task')!r}, not {task!r}")
    return model_from_spec(data)


def stored_specs(notebook) -> list[dict]:
    """The specs of the in-page models that ``notebook``'s stored outputs hold, in order (the page's model,
    read back without running the notebook)."""
    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    pages = ("".join(o.get("data", {}).get("text/html", "")) for c in cells for o in c.get("outputs", []))
    return [json.loads(m[1].replace("<\\/", "</")) for page in pages for m in [STORED_SPEC.search(page)] if m]

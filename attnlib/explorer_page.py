"""The static half of ``attnlib.explorer``: an explorer's frames and the script that swaps them, as HTML.

The output works on a page with no kernel and no network (the course's website, an exported notebook): the
controls are drawn by the script, and a range slider moves from frame to frame (the live kernel's slider moves
in the finer ``step``), so that the readout is always the value of the figure shown. A value that still falls
between frames shows the nearest frame, and the note under the figure says so.
"""

from __future__ import annotations

import base64
import hashlib
import html as html_text
import json
import re
from collections.abc import Callable

NOTE = "{count} precomputed figures; run the notebook to recompute any value."
# How the script shows a frame: in a notebook's output each frame is base64 PNG inside the output (it works
# alone, with no files beside it); on the website each is a file of its own (``frames_as_files``).
FRAME_STATEMENT = 'img.src = "data:image/png;base64," + data.frames[index];'
SITE_FRAME_STATEMENT = "img.src = data.frames[index];"

SCRIPT = """function attnlibExplorer(root) {
  var data = JSON.parse(root.querySelector(".attnlib-explorer-data").textContent);
  var img = root.querySelector(".attnlib-explorer-frame");
  var note = root.querySelector(".attnlib-explorer-note"), base = note.textContent;
  // each frame's alt text in the page's language: the Korean site's <html lang="ko">, else English
  var lang = /^ko\\b/i.test(document.documentElement.lang || "") ? "ko" : "en";
  var inputs = [], readouts = [];
  function fmt(c, v) {
    if (typeof v !== "number") return v;
    return c.kind === "range" ? v.toFixed(c.digits) : String(+v.toFixed(c.digits));
  }
  function nearest(frames, v) {
    var best = 0;
    for (var i = 1; i < frames.length; i++) {
      if (Math.abs(frames[i] - v) < Math.abs(frames[best] - v)) best = i;
    }
    return best;
  }
  function show() {
    var index = 0, snapped = [];
    data.controls.forEach(function (c, k) {
      var range = c.kind === "range", raw = +inputs[k].value;
      var i = range ? nearest(c.frames, raw) : raw, v = range ? raw : c.frames[i];
      if (range && Math.abs(c.frames[i] - v) > c.step * 1e-6) {
        snapped.push(c.label + " = " + fmt(c, v) + " is shown at " + fmt(c, c.frames[i]));
      }
      if (c.kind !== "choice") {
        readouts[k].textContent = fmt(c, v);
        inputs[k].setAttribute("aria-valuetext", fmt(c, v));  // a screen reader says the value, not its index
      }
      index = index * c.frames.length + i;
    });
    img.src = "data:image/png;base64," + data.frames[index];
    img.alt = data.alts[lang][index];
    root.setAttribute("data-frame", index);
    note.textContent = snapped.length
      ? "Snapped to the nearest precomputed value: " + snapped.join("; ") + "."
      : base;
  }
  data.controls.forEach(function (c) {
    var label = document.createElement("label"), readout = document.createElement("span"), input;
    label.style.marginRight = "1.5em";
    label.appendChild(document.createTextNode(c.label + " "));
    if (c.kind === "choice") {
      input = document.createElement("select");
      c.frames.forEach(function (o, i) { input.add(new Option(o, i)); });
    } else {
      // A range moves from frame to frame: every value the reader can choose is one that has its figure (a
      // finer step would show, at most positions, the figure of another value than the readout).
      var last = c.frames.length - 1, between = last > 0 ? (c.frames[last] - c.frames[0]) / last : c.step;
      input = document.createElement("input");
      input.type = "range";
      input.min = c.kind === "range" ? c.frames[0] : 0;
      input.max = c.kind === "range" ? c.frames[last] : last;
      input.step = c.kind === "range" ? between : 1;
    }
    input.value = c.kind === "range" ? c.value : c.frames.indexOf(c.value);
    input.name = c.name;
    input.addEventListener("input", show);
    input.addEventListener("change", show);
    readout.style.marginLeft = "0.5em";
    label.appendChild(input);
    label.appendChild(readout);
    root.querySelector(".attnlib-explorer-controls").appendChild(label);
    inputs.push(input);
    readouts.push(readout);
  });
  show();
}"""


def html(
    controls: list[dict],
    frames: list[bytes],
    first: int,
    alts: dict[str, list[str]],
    width: int | None = None,
) -> str:
    """The explorer's HTML: ``frames`` (PNG bytes) in the order of the controls' grid, ``first`` shown;
    ``alts``: each frame's alt text by language ("en", "ko"; ``attnlib.explorer_alt``); ``width``: the frames'
    width in CSS pixels (high-density frames carry more pixels than that; None: their own)."""
    if sorted(alts) != ["en", "ko"] or any(len(said) != len(frames) for said in alts.values()):
        raise ValueError("alts must hold one alt text per frame in English ('en') and Korean ('ko')")
    if width is not None and (not isinstance(width, int) or width < 1):
        raise ValueError(f"width must be a positive number of CSS pixels, got {width!r}")
    encoded = [base64.b64encode(frame).decode() for frame in frames]
    data = {"controls": controls, "frames": encoded, "alts": alts}
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    payload = payload.replace("</", "<\\/")  # the JSON sits in a <script> element
    key = hashlib.sha256(payload.encode()).hexdigest()[:12]
    note = html_text.escape(NOTE.format(count=len(frames)))
    return (
        f'<div class="attnlib-explorer" id="attnlib-explorer-{key}">'
        '<div class="attnlib-explorer-controls"></div>'
        f'<img class="attnlib-explorer-frame" alt="{html_text.escape(alts["en"][first])}" '
        + (f'width="{width}" ' if width else "")
        + f'style="max-width:100%;height:auto" src="data:image/png;base64,{encoded[first]}">'
        f'<p class="attnlib-explorer-note" aria-live="polite" style="font-size:0.85em">{note}</p>'
        f'<script type="application/json" class="attnlib-explorer-data">{payload}</script>'
        f"<script>{SCRIPT}\nattnlibExplorer(document.getElementById('attnlib-explorer-{key}'));</script>"
        "</div>"
    )


EXPLORER = re.compile(
    r'(<div class="attnlib-explorer" id="attnlib-explorer-\w+">.*?'
    r'<script type="application/json" class="attnlib-explorer-data">)(.*?)(</script>.*?</script></div>)',
    re.S,
)
FIRST_FRAME = re.compile(r'(<img class="attnlib-explorer-frame" [^>]*?src=")data:image/png;base64,([^"]*)(")')


def frames_as_files(page: str, save: Callable[[bytes], str]) -> str:
    """``page`` (HTML) with the frames of every explorer on it as files: ``save(png)`` stores one frame and
    returns its URL, and the browser fetches a frame when the reader moves to it, instead of every frame
    arriving with the page as base64 (a third larger, and barely compressible). The website's build runs this
    (``_ext/page_weight.py``); a notebook's own output keeps its frames inside, so it works alone. An explorer
    already converted is left as it is."""

    def convert(found: re.Match) -> str:
        head, payload, tail = found.groups()
        data = json.loads(payload)
        if FRAME_STATEMENT not in tail:  # converted before
            return found[0]
        encoded = data["frames"]
        data["frames"] = [save(base64.b64decode(frame)) for frame in encoded]
        urls = dict(zip(encoded, data["frames"], strict=True))
        head = FIRST_FRAME.sub(lambda m: m[1] + html_text.escape(urls[m[2]]) + m[3], head, count=1)
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
        return head + payload + tail.replace(FRAME_STATEMENT, SITE_FRAME_STATEMENT, 1)

    return EXPLORER.sub(convert, page)

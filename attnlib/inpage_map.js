// The in-page model's alignment map (inpage.js computes it): a table of shaded cells, row t an output step,
// column s a source token, under it its colour scale and a readout of one cell's value, for every reader:
//   mouse     hovering a cell shows its title (α to DIGITS places);
//   keyboard  the map takes the focus (Tab); the arrow keys, Home and End move a current cell;
//   touch     a tap on a cell makes it the current cell.
// The current cell's output token, source token and α are written into the readout (aria-live="polite", so a
// screen reader says it), in the page's language (inpage_words.js).
(function () {
  "use strict";
  const A = (window.attnlibInpage = window.attnlibInpage || {});
  if (A.drawMap) return; // one copy per page
  const DIGITS = 3;
  // A cell's shade: the weight is the opacity of one colour, so the scale runs linearly from the page's
  // background (α = 0) to that colour (α = 1), the legend under the map.
  const shade = (w) => `rgba(31,119,180,${w})`;
  function legend(lang = A.language()) {
    return `<p class="inpage-legend" style="font-size:80%;margin:0.3em 0">${A.said(lang).legend} α<sub>t,s</sub> &nbsp;0 ` +
      `<span style="display:inline-block;width:10em;height:0.9em;vertical-align:middle;border:1px solid #999;` +
      `background:linear-gradient(to right,${shade(0)},${shade(0.5)},${shade(1)})"></span> 1</p>`;
  }
  const visible = (t) => t.replace(/ /g, "␣");
  const esc = (t) => visible(t.replace(/&/g, "&amp;").replace(/</g, "&lt;"));
  const maps = new WeakMap(); // box -> what its map shows: {source, rows, weights, t, s} (t, s: the current cell)

  // The readout, the map's focus and its keys and taps: once per box, on elements that outlive every redraw.
  function mountMap(box) {
    const map = box.querySelector(".inpage-map");
    let readout = box.querySelector(".inpage-readout");
    if (!readout) {
      readout = document.createElement("p");
      readout.className = "inpage-readout";
      readout.setAttribute("aria-live", "polite");
      readout.style.cssText = "font-size:85%;font-family:monospace;min-height:1.3em;margin:0.2em 0";
      map.after(readout);
    }
    map.tabIndex = 0;
    map.setAttribute("role", "group");
    map.setAttribute("aria-label", A.said().map);
    map.addEventListener("focus", () => {
      const m = maps.get(box);
      if (m && m.t === null) choose(box, 0, 0);
    });
    const MOVES = { ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0] };
    map.addEventListener("keydown", (event) => {
      const m = maps.get(box);
      if (!m || !m.weights.length) return;
      const [t, s] = m.t === null ? [0, 0] : [m.t, m.s];
      if (MOVES[event.key]) choose(box, t + MOVES[event.key][0], s + MOVES[event.key][1]);
      else if (event.key === "Home") choose(box, t, 0);
      else if (event.key === "End") choose(box, t, m.weights[t].length - 1);
      else return;
      event.preventDefault(); // the keys move the cell, not the page
    });
    map.addEventListener("pointerdown", (event) => { // a tap, a pen or a click
      const cell = event.target.closest && event.target.closest("td[data-t]");
      if (cell) choose(box, Number(cell.dataset.t), Number(cell.dataset.s));
    });
  }
  // Make cell (t, s), clamped to the map, the current one: outline it, and write its value into the readout.
  function choose(box, t, s) {
    const m = maps.get(box);
    if (!m || !m.weights.length) return;
    m.t = Math.min(Math.max(t, 0), m.weights.length - 1);
    m.s = Math.min(Math.max(s, 0), m.weights[m.t].length - 1);
    const before = box.querySelector(".inpage-current");
    if (before) { before.classList.remove("inpage-current"); before.style.outline = ""; }
    const cell = box.querySelector(`.inpage-map td[data-t="${m.t}"][data-s="${m.s}"]`);
    cell.classList.add("inpage-current");
    cell.style.outline = "2px solid currentColor";
    const alpha = m.weights[m.t][m.s].toFixed(DIGITS);
    box.querySelector(".inpage-readout").textContent = A.said().cell({
      output: visible(m.rows[m.t]), source: visible(m.source[m.s]), t: m.t, s: m.s, alpha });
  }
  // Draw the map of one result: rows (output tokens, <eos> last), source tokens, weights (rows × source).
  // A redraw (the reader typed) clears the readout: its cell may no longer exist.
  function drawMap(box, source, rows, weights) {
    const cell = (w, t, s) => `<td data-t="${t}" data-s="${s}" title="${w.toFixed(DIGITS)}" ` +
      `style="background:${shade(w.toFixed(3))};width:1.6em;height:1.4em;border:1px solid #eee"></td>`;
    box.querySelector(".inpage-map").innerHTML = "<table style='border-collapse:collapse;font-size:80%'>" +
      "<tr><td></td>" + source.map((t) => `<th style="font-weight:normal">${esc(t)}</th>`).join("") + "</tr>" +
      rows.map((y, t) => `<tr><th style="font-weight:normal;text-align:right">${esc(y)}</th>` +
        weights[t].map((w, s) => cell(w, t, s)).join("") + "</tr>").join("") + "</table>" +
      (weights.length ? legend() : "");
    maps.set(box, { source, rows, weights, t: null, s: null });
    box.querySelector(".inpage-readout").textContent = "";
  }

  Object.assign(A, { legend, mountMap, drawMap, choose });
})();

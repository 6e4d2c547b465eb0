// A trained attnlib seq2seq model, run in the reader's browser (attnlib/inpage.py writes its weights).
//
// The same equations as attnlib/seq2seq, in float64, for one sentence and greedy decoding:
//   encoder   →h_s, ←h_s = GRU over emb(x_s) both ways;  h_s = [→h_s; ←h_s];  s_0 = tanh(W_init ←h_1)
//   bahdanau  e_t = vᵀ tanh(W_q s_{t-1} + W_k h_s);  α_t = softmax(e_t);  c_t = Hᵀα_t
//             s_t = ContextGRUCell(emb(y_{t-1}), c_t, s_{t-1});  logits = W_y tanh(W_o [s_t; c_t; emb(y_{t-1})])
//   luong     s_t = GRU([emb(y_{t-1}); s~_{t-1}], s_{t-1});  e_t = s_tᵀ (W h_s) (general) or s_tᵀ h_s (dot)
//             c_t = Hᵀ softmax(e_t);  s~_t = tanh(W_c [c_t; s_t]);  logits = W_s s~_t
// Greedy: y_t = argmax logits, until <eos> or 2 S + 10 steps (attnlib.seq2seq.decoding.greedy).
(function () {
  "use strict";
  const A = (window.attnlibInpage = window.attnlibInpage || {});
  if (A.translate) return; // the engine is inlined by every demo; one copy per page is enough
  const PAD = 0, SOS = 1, EOS = 2, UNK = 3;

  function decodeFloats(b64) {
    const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    return Array.from(new Float32Array(bytes.buffer));
  }
  function params(spec) {
    const P = {};
    for (const [name, p] of Object.entries(spec.params)) P[name] = { shape: p.shape, data: decodeFloats(p.data) };
    return P;
  }
  // y = W x (+ b) for W (out, in) stored row-major, as torch does.
  function matvec(W, x, b) {
    const [rows, cols] = W.shape, y = new Array(rows);
    for (let i = 0; i < rows; i++) {
      let sum = b ? b.data[i] : 0;
      for (let j = 0; j < cols; j++) sum += W.data[i * cols + j] * x[j];
      y[i] = sum;
    }
    return y;
  }
  const add = (a, b) => a.map((v, i) => v + b[i]);
  const sigmoid = (v) => 1 / (1 + Math.exp(-v));
  const row = (E, i) => E.data.slice(i * E.shape[1], (i + 1) * E.shape[1]);
  function softmax(e) {
    const m = Math.max(...e), p = e.map((v) => Math.exp(v - m)), z = p.reduce((a, b) => a + b, 0);
    return p.map((v) => v / z);
  }
  // torch.nn.GRU: r, z from [r; z; n] rows; n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)); h' = (1-z) n + z h
  function gruStep(P, name, x, h) {
    const gi = matvec(P[name("weight_ih")], x, P[name("bias_ih")]);
    const gh = matvec(P[name("weight_hh")], h, P[name("bias_hh")]);
    const d = h.length, out = new Array(d);
    for (let k = 0; k < d; k++) {
      const r = sigmoid(gi[k] + gh[k]), z = sigmoid(gi[d + k] + gh[d + k]);
      const n = Math.tanh(gi[2 * d + k] + r * gh[2 * d + k]);
      out[k] = (1 - z) * n + z * h[k];
    }
    return out;
  }
  function runGru(P, prefix, xs, suffix, h0) {
    const name = (w) => prefix + w + suffix;
    let h = h0, states = [];
    for (const x of xs) { h = gruStep(P, name, x, h); states.push(h); }
    return states;
  }

  function encode(m, ids) {
    const P = m.P, xs = ids.map((i) => row(P["encoder.embed.weight"], i));
    const hidden = P["encoder.rnn.weight_hh_l0"].shape[1], zero = new Array(hidden).fill(0);
    const fwd = runGru(P, "encoder.rnn.", xs, "_l0", zero);
    const bwd = runGru(P, "encoder.rnn.", xs.slice().reverse(), "_l0_reverse", zero).reverse();
    const H = fwd.map((f, s) => f.concat(bwd[s]));
    const s0 = m.cfg.bridge === "learned"
      ? matvec(P["encoder.W_init.weight"], bwd[0], P["encoder.W_init.bias"]).map(Math.tanh)
      : fwd[fwd.length - 1].concat(bwd[0]);
    return { H, s0 };
  }
  function attend(e, H) {
    const alpha = softmax(e), c = new Array(H[0].length).fill(0);
    H.forEach((h, s) => h.forEach((v, k) => { c[k] += alpha[s] * v; }));
    return { alpha, c };
  }

  function bahdanauStep(m, y, st) {
    const P = m.P, emb = row(P["decoder.embed.weight"], y), s = st.s;
    const q = matvec(P["decoder.score.W_q"], s), v = P["decoder.score.v"].data;
    const e = st.keys.map((k) => k.reduce((acc, kv, a) => acc + v[a] * Math.tanh(q[a] + kv), 0));
    const { alpha, c } = attend(e, st.H);
    const d = s.length, Wy = matvec(P["decoder.cell.W.weight"], emb, P["decoder.cell.W.bias"]);
    const Cc = matvec(P["decoder.cell.C.weight"], c), Us = matvec(P["decoder.cell.U_zr.weight"], s);
    const z = [], r = [];
    for (let k = 0; k < d; k++) {
      z.push(sigmoid(Wy[k] + Us[k] + Cc[k]));
      r.push(sigmoid(Wy[d + k] + Us[d + k] + Cc[d + k]));
    }
    const Urs = matvec(P["decoder.cell.U.weight"], s.map((v2, k) => r[k] * v2));
    const sNew = s.map((sk, k) => z[k] * sk + (1 - z[k]) * Math.tanh(Wy[2 * d + k] + Urs[k] + Cc[2 * d + k]));
    const hid = matvec(P["decoder.out.W_o.weight"], sNew.concat(c, emb), P["decoder.out.W_o.bias"]).map(Math.tanh);
    const logits = matvec(P["decoder.out.W_y.weight"], hid, P["decoder.out.W_y.bias"]);
    return { logits, alpha, st: { ...st, s: sNew } };
  }
  function luongStep(m, y, st) {
    const P = m.P, emb = row(P["decoder.embed.weight"], y);
    const x = m.cfg.input_feed ? emb.concat(st.sTilde) : emb;
    const s = runGru(P, "decoder.rnn.", [x], "_l0", st.s)[0];
    const e = st.keys.map((k) => k.reduce((acc, kv, i) => acc + kv * s[i], 0)); // e_{t,s} = s_tᵀ (W h_s)
    const { alpha, c } = attend(e, st.H);
    const sTilde = matvec(P["decoder.W_c.weight"], c.concat(s), P["decoder.W_c.bias"]).map(Math.tanh);
    const logits = matvec(P["decoder.W_s.weight"], sTilde, P["decoder.W_s.bias"]);
    return { logits, alpha, st: { ...st, s, sTilde } };
  }
  // What the page does to typed text before the model reads it, as the training data was prepared (the same
  // steps as attnlib.inpage.prepare): lower case, punctuation dropped or split off (words), then at most
  // max_tokens characters or words.
  const PUNCTUATION = /[.,!?¿¡;:"]/g;
  function prepare(spec, text) {
    let t = spec.lower === false ? text : text.toLowerCase();
    let tokens;
    if (spec.tokens === "chars") tokens = Array.from(t.trim());
    else {
      if (spec.punctuation === "drop") t = t.replace(PUNCTUATION, " ");
      else if (spec.punctuation === "split") t = t.replace(PUNCTUATION, (p) => ` ${p} `);
      tokens = t.split(/\s+/).filter(Boolean);
    }
    const max = spec.max_tokens || tokens.length;
    return { tokens: tokens.slice(0, max), cut: Math.max(0, tokens.length - max) };
  }
  function translate(m, text) {
    const { tokens, cut } = prepare(m.spec, text);
    if (tokens.length === 0) return { source: [], output: [], outputIds: [], weights: [], unknown: [], cut };
    const ids = tokens.map((t) => (m.srcIndex.has(t) ? m.srcIndex.get(t) : UNK)); // a Map: no prototype keys
    const { H, s0 } = encode(m, ids);
    let st = { H, s: s0 };
    // What the score reads of each h_s, once per sentence: W_k h_s (additive), W h_s (general), h_s (dot).
    if (m.cfg.kind === "bahdanau") st.keys = H.map((h) => matvec(m.P["decoder.score.W_k"], h));
    else {
      st.keys = m.cfg.score === "general" ? H.map((h) => matvec(m.P["decoder.score.W"], h)) : H;
      st.sTilde = new Array(s0.length).fill(0);
    }
    const step = m.cfg.kind === "bahdanau" ? bahdanauStep : luongStep;
    const output = [], outputIds = [], weights = [];
    let y = SOS;
    for (let t = 0; t < 2 * tokens.length + 10; t++) {
      const out = step(m, y, st);
      st = out.st;
      weights.push(out.alpha);
      y = out.logits.indexOf(Math.max(...out.logits));
      if (y === EOS) break;
      outputIds.push(y);
      if (y !== PAD && y !== SOS) output.push(m.spec.tgt_itos[y]); // as Vocab.decode reads an output
    }
    const unknown = [...new Set(tokens.filter((t, i) => ids[i] === UNK))];
    return { source: tokens.map((t, i) => (ids[i] === UNK ? "<unk>" : t)), output, outputIds, weights, unknown, cut };
  }

  function load(spec) {
    const srcIndex = new Map(spec.src_itos.map((t, i) => [t, i])); // as Vocab.id: specials included
    return { spec, cfg: spec.config, P: params(spec), srcIndex };
  }

  // Whether the page flags `text` as written in none of the layouts the model was trained on (spec.formats:
  // [{example, pattern}], from attnlib.data.dates.format_pattern): what the model reads of it matches no pattern
  // as a whole. attnlib.inpage.outside_formats is the same test in Python.
  function outsideFormats(spec, text) {
    const read = prepare(spec, text).tokens.join(spec.tokens === "chars" ? "" : " ");
    const formats = spec.formats || [];
    return formats.length > 0 && read.length > 0 && !formats.some((f) => new RegExp(`^(?:${f.pattern})$`).test(read));
  }
  // The page: the answer and the notes under it (here), the map (inpage_map.js), its words (inpage_words.js).
  // What the reader should know about the answer, in words (in the page's language): an empty box, tokens the
  // model never saw, a cut, numbers outside the range it was trained on (spec.ranges: [{pattern, low, high,
  // message}]), a layout that none of its training formats has (spec.formats).
  function notes(m, text, result, lang = A.language()) {
    const said = [], spec = m.spec, say = A.said(lang);
    if (!text.trim()) return [say.empty(spec)];
    const quote = (t) => `“${t === " " ? "␣" : t}”`;
    if (result.unknown.length) said.push(say.unknown(result.unknown.map(quote).join(", ")));
    if (result.cut) said.push(say.cut(spec, result.cut, spec.tokens === "chars"));
    for (const r of spec.ranges || []) {
      for (const found of text.matchAll(new RegExp(r.pattern, "g"))) {
        const v = Number(found[0]);
        if (v < r.low || v > r.high) { said.push(say.range(found[0], r)); break; }
      }
    }
    const typed = text.trim().length > 40 ? `${text.trim().slice(0, 40)}…` : text.trim();
    if (outsideFormats(spec, text)) said.push(say.outside(typed, spec.formats));
    return said;
  }
  function render(m, box, text) {
    const result = translate(m, text), { source, output, outputIds, weights } = result;
    const rows = outputIds.map((y) => m.spec.tgt_itos[y]).concat(["<eos>"]).slice(0, weights.length);
    box.querySelector(".inpage-output").textContent = output.join(m.spec.tokens === "chars" ? "" : " ");
    A.drawMap(box, source, rows, weights);
    box.querySelector(".inpage-note").textContent = notes(m, text, result).join(" ");
    const flag = box.querySelector(".inpage-flag"), outside = outsideFormats(m.spec, text);
    if (flag) flag.textContent = outside ? A.said().flag : ""; // pages written before it
    box.dataset.outside = outside ? "yes" : "no";
    box.dataset.result = JSON.stringify({ source, outputIds, weights });
  }
  // The course's model runs first; a page with a "load your own model" control may swap in the reader's
  // (inpage_load.js's ownModel checks the file, then calls use(model)).
  function mount(id) {
    const box = document.getElementById(id), course = load(JSON.parse(box.querySelector(".inpage-spec").textContent));
    const input = box.querySelector("input[type=text]");
    A.localise(box, course.spec); // the labels, in the page's language
    A.mountMap(box);
    let m = course;
    const run = () => render(m, box, input.value);
    input.addEventListener("input", run);
    if (box.querySelector(".inpage-file")) A.ownModel(box, course, (model) => { m = model; run(); });
    else run();
    return course;
  }
  Object.assign(A, { decodeFloats, load, prepare, translate, notes, outsideFormats, mount });
})();

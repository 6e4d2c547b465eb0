// The reader's own model in the page: a file written by attnlib.inpage.export, read from the reader's disk
// with FileReader (nothing leaves the computer), checked, then run by the same engine (inpage.js).
//
// A file is refused, with the reason in words, unless it is exactly what export writes for this page's task:
//   format "attnlib-inpage-model", version 1, the page's task and tokens, a model the engine runs,
//   every parameter the config implies with that shape and prod(shape) float32 values in base64, all finite,
//   vocabularies as long as the config says, starting with the special tokens; at most MAX_BYTES in all.
// The previous model stays in use when a file is refused.
(function () {
  "use strict";
  const A = window.attnlibInpage;
  if (!A || A.validate) return; // one copy per page; inpage.js comes first
  const FORMAT = "attnlib-inpage-model", VERSION = 1, MAX_BYTES = 8 * 1024 * 1024;
  const SPECIALS = ["<pad>", "<sos>", "<eos>", "<unk>"], MAX_SIZE = 4096, MAX_VOCAB = 200000;

  // The parameters of attnlib.seq2seq.build_model(kind, …) and their shapes (torch's state_dict names):
  // d_h = 2 hidden (bidirectional), d_s = dec_hidden, or d_h (bridge "final", Luong "dot"), or hidden.
  function expectedShapes(cfg) {
    const E = cfg.emb, h = cfg.hidden, dh = 2 * h, A_ = cfg.attn;
    const sameSize = cfg.bridge === "final" || (cfg.kind === "luong" && cfg.score === "dot");
    const ds = cfg.dec_hidden || (sameSize ? dh : h);
    const gru = (prefix, suffix, input, hidden) => ({
      [`${prefix}weight_ih${suffix}`]: [3 * hidden, input], [`${prefix}weight_hh${suffix}`]: [3 * hidden, hidden],
      [`${prefix}bias_ih${suffix}`]: [3 * hidden], [`${prefix}bias_hh${suffix}`]: [3 * hidden],
    });
    const shapes = {
      "encoder.embed.weight": [cfg.src_vocab, E],
      ...gru("encoder.rnn.", "_l0", E, h), ...gru("encoder.rnn.", "_l0_reverse", E, h),
      ...(cfg.bridge === "learned" ? { "encoder.W_init.weight": [ds, h], "encoder.W_init.bias": [ds] } : {}),
      "decoder.embed.weight": [cfg.tgt_vocab, E],
    };
    if (cfg.kind === "bahdanau") {
      return { ...shapes,
        "decoder.score.W_q": [A_, ds], "decoder.score.W_k": [A_, dh], "decoder.score.v": [A_],
        "decoder.cell.W.weight": [3 * ds, E], "decoder.cell.W.bias": [3 * ds], "decoder.cell.C.weight": [3 * ds, dh],
        "decoder.cell.U_zr.weight": [2 * ds, ds], "decoder.cell.U.weight": [ds, ds],
        "decoder.out.W_o.weight": [ds, ds + dh + E], "decoder.out.W_o.bias": [ds],
        "decoder.out.W_y.weight": [cfg.tgt_vocab, ds], "decoder.out.W_y.bias": [cfg.tgt_vocab] };
    }
    return { ...shapes, ...gru("decoder.rnn.", "_l0", E + (cfg.input_feed ? ds : 0), ds),
      ...(cfg.score === "general" ? { "decoder.score.W": [ds, dh] } : {}),
      "decoder.W_c.weight": [ds, dh + ds], "decoder.W_c.bias": [ds],
      "decoder.W_s.weight": [cfg.tgt_vocab, ds], "decoder.W_s.bias": [cfg.tgt_vocab] };
  }

  const isSize = (v, max) => Number.isInteger(v) && v >= 1 && v <= max;
  // A refusal: the reason `why` (a key of inpage_words.js's SAID.<language>.why) in the page's language.
  const said = (why, ...args) => A.said().why[why](...args);
  const fail = (why, ...args) => { throw new Error(said(why, ...args)); };
  const quoted = JSON.stringify;
  function checkConfig(cfg) {
    if (typeof cfg !== "object" || cfg === null) fail("noConfig");
    if (cfg.kind !== "bahdanau" && cfg.kind !== "luong") fail("kind", quoted(cfg.kind));
    if (cfg.cell !== "gru" || cfg.bidirectional !== true) fail("encoder");
    if (cfg.bridge !== "learned" && cfg.bridge !== "final") fail("bridge", quoted(cfg.bridge));
    const luongOk = ["dot", "general"].includes(cfg.score) && cfg.local === null && typeof cfg.input_feed === "boolean";
    if (cfg.kind === "luong" && !luongOk) fail("luong");
    for (const key of ["emb", "hidden", "attn"]) {
      if (!isSize(cfg[key], MAX_SIZE)) fail("size", key, MAX_SIZE);
    }
    if (cfg.dec_hidden !== null && !isSize(cfg.dec_hidden, MAX_SIZE)) fail("decHidden");
    for (const key of ["src_vocab", "tgt_vocab"]) {
      if (!isSize(cfg[key], MAX_VOCAB)) fail("vocabSize", key);
    }
  }
  function checkVocab(itos, size, key) {
    if (!Array.isArray(itos) || itos.length !== size) fail("vocabLength", key, size);
    if (!itos.every((t) => typeof t === "string") || SPECIALS.some((t, i) => itos[i] !== t)) {
      fail("vocabStart", key, SPECIALS.join(" "));
    }
  }
  // Each parameter: the shape the config implies, 4 prod(shape) bytes in base64 (4 characters per 3 bytes),
  // every value finite.
  function checkParams(params, cfg) {
    if (typeof params !== "object" || params === null) fail("noParams");
    const expected = expectedShapes(cfg);
    const missing = Object.keys(expected).filter((n) => !Object.hasOwn(params, n));
    const extra = Object.keys(params).filter((n) => !Object.hasOwn(expected, n));
    if (missing.length) fail("missing", missing[0], missing.length);
    if (extra.length) fail("extra", extra[0]);
    for (const [name, shape] of Object.entries(expected)) {
      const p = params[name], n = shape.reduce((a, b) => a * b, 1);
      if (typeof p !== "object" || p === null || quoted(p.shape) !== quoted(shape)) {
        fail("shape", name, quoted(p && p.shape), quoted(shape));
      }
      const base64 = typeof p.data === "string" && /^[A-Za-z0-9+/]*={0,2}$/.test(p.data);
      if (!base64 || p.data.length !== 4 * Math.ceil((4 * n) / 3)) fail("data", name, n);
      const bad = A.decodeFloats(p.data).findIndex((v) => !Number.isFinite(v));
      if (bad >= 0) fail("finite", name, bad);
    }
  }
  // The spec the engine runs: the file's model, its typed text prepared and flagged as the page's (same task).
  function validate(file, page) {
    if (typeof file !== "object" || file === null || file.format !== FORMAT) fail("notModel");
    if (file.version !== VERSION) fail("version", quoted(file.version), VERSION);
    if (file.task !== page.task || file.tokens !== page.tokens) fail("task", quoted(file.task), quoted(page.task));
    checkConfig(file.config);
    checkVocab(file.src_itos, file.config.src_vocab, "src_itos");
    checkVocab(file.tgt_itos, file.config.tgt_vocab, "tgt_itos");
    checkParams(file.params, file.config);
    const { config, src_itos, tgt_itos, params } = file;
    return { ...page, config, src_itos, tgt_itos, params };
  }
  // Read `text` (a file's contents) as a model for the page whose spec is `page`: the spec, or an Error.
  function parse(text, page) {
    let file;
    try { file = JSON.parse(text); } catch (e) { fail("notJson"); }
    return validate(file, page);
  }

  // The control: choose a file, see it run or the reason it was refused; a button goes back to the course's.
  function ownModel(box, course, use) {
    const chooser = box.querySelector(".inpage-file"), back = box.querySelector(".inpage-back");
    const which = box.querySelector(".inpage-which"), refused = box.querySelector(".inpage-refused");
    const show = (model, name) => {
      use(model);
      box.dataset.model = name ? "file" : "course";
      which.textContent = A.said().which(name);
      back.hidden = !name;
      box.dataset.answers = String(Number(box.dataset.answers || 0) + 1); // files read or refused so far
    };
    const refuse = (name, why) => {
      refused.textContent = A.said().refused(name, why);
      box.dataset.answers = String(Number(box.dataset.answers || 0) + 1);
    };
    chooser.addEventListener("change", () => {
      const file = chooser.files[0];
      chooser.value = ""; // choosing the same file again reads it again
      if (!file) return;
      refused.textContent = "";
      const MB = (bytes) => (bytes / 1048576).toFixed(1).replace(/\.0$/, "");
      if (file.size > MAX_BYTES) return refuse(file.name, said("tooLarge", MB(file.size), MB(MAX_BYTES)));
      const reader = new FileReader();
      reader.onerror = () => refuse(file.name, said("unreadable"));
      reader.onload = () => {
        let model;
        try { model = A.load(parse(reader.result, course.spec)); } catch (e) { return refuse(file.name, e.message); }
        refused.textContent = "";
        show(model, file.name);
      };
      reader.readAsText(file);
    });
    back.addEventListener("click", () => { refused.textContent = ""; show(course, null); });
    show(course, null);
  }

  Object.assign(A, { FORMAT, VERSION, MAX_BYTES, expectedShapes, validate, parse, ownModel });
})();

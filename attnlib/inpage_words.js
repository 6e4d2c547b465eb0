// What the in-page demo says, in the page's language (inpage.js runs the model; inpage_map.js draws its map).
//
// The Korean site's notebooks hold the English ones' outputs byte for byte, so the Korean words are chosen
// here, at run time, by <html lang="ko">: the demo's fixed labels (marked data-say="key" by attnlib.inpage),
// the notes under the answer, the map's legend and readout, and the own-model control's sentences and the
// reasons it gives for refusing a file.
(function () {
  "use strict";
  const A = (window.attnlibInpage = window.attnlibInpage || {});
  if (A.SAID) return; // one copy per page
  // The page's language: the Korean site's <html lang="ko">; English elsewhere (Jupyter, Colab, node).
  function language() {
    const lang = typeof document === "undefined" ? "" : document.documentElement.lang || "";
    return /^ko\b/i.test(lang) ? "ko" : "en";
  }
  // A few of the trained formats, spread over the list (the whole list is under the box).
  const someFormats = (formats) => [0, 1, 2, 3].map((i) => formats[Math.round((i * (formats.length - 1)) / 3)].example)
    .filter((e, i, all) => all.indexOf(e) === i).map((e) => `“${e}”`).join(", ");
  const SAID = {
    en: {
      empty: (spec) => `The box is empty: ${spec.empty || "type something"}.`,
      unknown: (list) => `Not in what the model learned, read as <unk>: ${list}.`,
      cut: (spec, cut, chars) => `Only the first ${spec.max_tokens} ${chars ? "characters" : "words"} are read (${cut} more were cut).`,
      range: (found, r) => `${found}: ${r.message}`,
      outside: (typed, formats) => `“${typed}” is written in none of the ${formats.length} formats the model ` +
        `learned (such as ${someFormats(formats)}; all are listed under the box): the answer above is its ` +
        "guess at a layout it never saw, and may be wrong.",
      flag: "⚠ outside the formats it learned",
      legend: "colour: attention weight",
      // the map: what a screen reader hears on reaching it, and the readout of its current cell
      map: "Attention map: arrow keys move from cell to cell, each cell's weight is read out below the map",
      cell: (c) => `output “${c.output}” (step ${c.t + 1}), source “${c.source}” (token ${c.s + 1}): α = ${c.alpha}`,
      which: (name) => (name ? `Shown: your model, “${name}”.` : "Shown: the course's model."),
      refused: (name, why) => `“${name}” was not loaded: ${why}. The model shown is unchanged.`,
      // why a file is not a model for this page (inpage_load.js); quoted values come JSON-quoted
      why: {
        notJson: () => "it is not JSON (not a model file written by attnlib.inpage.export)",
        notModel: () => "it is not a model file written by attnlib.inpage.export",
        version: (found, wanted) => `its version ${found} is not ${wanted}`,
        task: (found, page) => `it is a model for the task ${found}, and this page's model is for ${page}`,
        noConfig: () => "it has no config",
        kind: (kind) => `its kind ${kind} is not one the page runs ("bahdanau", "luong")`,
        encoder: () => "the page runs a bidirectional GRU encoder only",
        bridge: (bridge) => `its bridge ${bridge} is not "learned" or "final"`,
        luong: () => "the page runs global Luong attention with a dot or general score only",
        size: (key, most) => `config.${key} is not a size from 1 to ${most}`,
        decHidden: () => "config.dec_hidden is not null or a size",
        vocabSize: (key) => `config.${key} is not a vocabulary size`,
        vocabLength: (key, size) => `${key} does not hold the ${size} tokens its config says`,
        vocabStart: (key, specials) => `${key} is not a list of tokens starting with ${specials}`,
        noParams: () => "it has no parameters",
        missing: (name, count) => `parameter ${name} is missing (${count} in all)`,
        extra: (name) => `parameter ${name} is not one of this model's`,
        shape: (name, found, needed) => `${name} has shape ${found}, but the config needs ${needed}`,
        data: (name, n) => `${name} does not hold ${n} float32 values in base64`,
        finite: (name, at) => `${name} holds a value that is not a finite number (at index ${at})`,
        tooLarge: (mb, most) => `it is ${mb} MB, more than the ${most} MB a model file may be`,
        unreadable: () => "the browser could not read it",
      },
    },
    ko: {
      empty: () => "입력 칸이 비어 있다: 무엇이든 입력하라.",
      unknown: (list) => `모델이 학습한 어휘에 없어 <unk>로 읽는다: ${list}.`,
      cut: (spec, cut, chars) => `앞의 ${spec.max_tokens}${chars ? "글자" : "단어"}만 읽는다 (나머지 ${cut}${chars ? "글자" : "단어"}는 잘렸다).`,
      range: (found, r) => `${found}: 모델이 학습한 범위(${r.low}-${r.high}) 밖의 값이다. 답이 틀릴 수 있다.`,
      outside: (typed, formats) => `입력한 “${typed}”의 형식은 모델이 학습한 ${formats.length}가지 형식(예: ` +
        `${someFormats(formats)}; 전체 목록은 입력 칸 아래에 있다) 중 어느 것과도 맞지 않는다. 위의 답은 ` +
        "본 적 없는 형식을 두고 한 추측이라 틀릴 수 있다.",
      flag: "⚠ 학습한 형식 밖",
      legend: "색: 어텐션 가중치",
      map: "어텐션 맵: 화살표 키로 칸을 옮기면 그 칸의 가중치를 맵 아래에 읽어 준다",
      cell: (c) => `출력 “${c.output}” (${c.t + 1}번째 시점), 소스 “${c.source}” (${c.s + 1}번째 토큰): α = ${c.alpha}`,
      which: (name) => (name ? `보이는 모델: 여러분의 모델 “${name}”.` : "보이는 모델: 강좌의 모델."),
      refused: (name, why) => `“${name}”을(를) 불러오지 않았다: ${why}. 보이는 모델은 그대로다.`,
      why: {
        notJson: () => "JSON이 아니다 (attnlib.inpage.export가 쓴 모델 파일이 아니다)",
        notModel: () => "attnlib.inpage.export가 쓴 모델 파일이 아니다",
        version: (found, wanted) => `파일의 버전 ${found}은(는) 이 페이지가 읽는 버전 ${wanted}이(가) 아니다`,
        task: (found, page) => `과제 ${found}의 모델인데, 이 페이지의 모델은 과제 ${page}의 것이다`,
        noConfig: () => "config가 없다",
        kind: (kind) => `모델 종류 ${kind}은(는) 이 페이지가 돌리는 종류("bahdanau", "luong")가 아니다`,
        encoder: () => "이 페이지는 양방향 GRU 인코더만 돌린다",
        bridge: (bridge) => `bridge ${bridge}은(는) "learned"도 "final"도 아니다`,
        luong: () => "이 페이지는 dot 또는 general 스코어를 쓰는 글로벌 루옹 어텐션만 돌린다",
        size: (key, most) => `config.${key}이(가) 1부터 ${most}까지의 크기가 아니다`,
        decHidden: () => "config.dec_hidden이 null도 아니고 크기도 아니다",
        vocabSize: (key) => `config.${key}이(가) 어휘 크기가 아니다`,
        vocabLength: (key, size) => `${key}에 config가 말하는 토큰 ${size}개가 들어 있지 않다`,
        vocabStart: (key, specials) => `${key}이(가) ${specials}(으)로 시작하는 토큰 목록이 아니다`,
        noParams: () => "파라미터가 없다",
        missing: (name, count) => `파라미터 ${name}이(가) 없다 (빠진 것은 모두 ${count}개다)`,
        extra: (name) => `파라미터 ${name}은(는) 이 모델의 것이 아니다`,
        shape: (name, found, needed) => `${name}의 모양이 ${found}인데, config에 따르면 ${needed}여야 한다`,
        data: (name, n) => `${name}에 base64로 된 float32 값 ${n}개가 들어 있지 않다`,
        finite: (name, at) => `${name}에 유한한 수가 아닌 값이 있다 (인덱스 ${at})`,
        tooLarge: (mb, most) => `파일이 ${mb} MB로, 모델 파일이 가질 수 있는 크기 ${most} MB보다 크다`,
        unreadable: () => "브라우저가 파일을 읽지 못했다",
      },
    },
  };
  const said = (lang = language()) => SAID[lang] || SAID.en;

  // The demo's fixed labels on a Korean page (attnlib.inpage writes them in English, each in an element
  // marked data-say; data-n is a count the label names). An English page keeps what Python wrote.
  const PROMPT_KO = { dates: "날짜를 입력하라", "toy-translation": "영어 문장을 입력하라" };
  const LABELS_KO = {
    prompt: (spec) => PROMPT_KO[spec.task] || "소스를 입력하라",
    greedy: () => "그리디 출력",
    "known-formats": (spec, n) => `모델이 학습한 형식 ${n}가지`,
    "known-words": (spec, n) => `모델이 아는 단어 ${n}개`,
    known: () => "모델이 학습한 것",
    load: () => "내 모델 불러오기 (이 장의 내보내기 셀이 쓴 파일. 파일은 여러분의 컴퓨터를 떠나지 않는다):",
    back: () => "강좌의 모델로 돌아가기",
    about: (spec, n) => `여러분의 브라우저에서 돈다 (가중치 ${n}개, 서버 없음). 행: 출력 시점, 열: 소스 토큰, 음영: 어텐션 가중치`,
    "about-value": () => "(칸에 마우스를 올리거나 칸을 누르면, 또는 맵을 선택하고 화살표 키를 쓰면 그 값이 보인다).",
  };
  function localise(box, spec, lang = language()) {
    if (lang !== "ko") return;
    box.querySelectorAll("[data-say]").forEach((el) => {
      const label = LABELS_KO[el.dataset.say];
      if (label) el.textContent = label(spec, el.dataset.n);
    });
  }

  Object.assign(A, { language, SAID, said, LABELS_KO, localise });
})();

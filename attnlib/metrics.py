"""How good is a model? Exact match, token accuracy, BLEU, perplexity, and alignment error rate (AER).

Every function takes plain Python sequences (lists of token ids or strings), so that lessons can call them on
decoded output, on gold data, or on hand-made examples alike. Decoded id sequences are cut at <eos> with
``strip_special`` first.

    exact match     = (1/N) sum_n [y^hat_n == y_n]
    token accuracy  = sum_n sum_t [y^hat_{n,t} == y_{n,t}] / sum_n |y_n|
    perplexity      = exp(-(1/N_tok) sum log p(y_t | y_<t, x))          (mean NLL over non-pad tokens)
    BLEU            = sacrebleu.corpus_bleu                              (Papineni et al. 2002; Post 2018)
    AER             = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)            (Och & Ney 2003)

The ``*_scores`` functions return the same measures per test sentence (``attnlib.ranking.TestScores``), so
that a ranking of trained variants can weigh the test set's own sampling noise
(attnlib.notebook.claim_ranked); ``float()`` of each equals the corpus measure above.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import torch
import torch.nn.functional as F

from attnlib import _checks
from attnlib.data.vocab import EOS_ID, PAD_ID, SOS_ID
from attnlib.modes import evaluating
from attnlib.ranking import TestScores

Link = tuple[int, int]  # (target index t, source index s), 0-based, as in the data package's gold alignments


def strip_special(ids: Iterable[int], eos: int = EOS_ID, drop: Iterable[int] = (PAD_ID, SOS_ID)) -> list[int]:
    """Token ids up to (not including) the first ``eos``, without the ids in ``drop`` (<pad>, <sos>)."""
    drop = set(drop)
    out = []
    for i in ids:
        i = int(i)
        if i == eos:
            break
        if i not in drop:
            out.append(i)
    return out


def exact_match(hyps: Sequence[Sequence], refs: Sequence[Sequence]) -> float:
    """Fraction of sequences predicted exactly (same tokens, same length)."""
    _same_count(hyps, refs)
    return sum(list(h) == list(r) for h, r in zip(hyps, refs, strict=True)) / max(len(refs), 1)


def token_accuracy(hyps: Sequence[Sequence], refs: Sequence[Sequence]) -> float:
    """Position-wise accuracy over reference tokens: a missing (too short) hypothesis token counts as wrong,
    extra hypothesis tokens are ignored."""
    _same_count(hyps, refs)
    correct = sum(sum(a == b for a, b in zip(h, r, strict=False)) for h, r in zip(hyps, refs, strict=True))
    total = sum(len(r) for r in refs)
    return correct / max(total, 1)


def bleu(
    hyps: Sequence[str | Sequence[str]], refs: Sequence[str | Sequence[str]], tokenize: str = "none"
) -> float:
    """Corpus BLEU (0-100) with sacrebleu, one reference per sentence.

    Sentences are strings or lists of tokens (joined with spaces). ``tokenize="none"`` is the right choice
    for the course's data, which is already tokenised (punctuation split off): sacrebleu then counts n-grams
    of our own tokens. Use ``"13a"`` (sacrebleu's default, the WMT standard) only for detokenised raw text.
    """
    import sacrebleu  # here, not at the top: `import attnlib` does not need it

    _same_count(hyps, refs)
    hyps = [h if isinstance(h, str) else " ".join(h) for h in hyps]
    refs = [r if isinstance(r, str) else " ".join(r) for r in refs]
    return float(sacrebleu.corpus_bleu(hyps, [refs], tokenize=tokenize).score)


def perplexity(logits: torch.Tensor, targets: torch.Tensor, pad: int = 0) -> float:
    """exp(mean negative log-likelihood) of ``targets (B, T)`` under ``logits (B, T, V)``, <pad> ignored."""
    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=pad)
    return float(torch.exp(nll))


def attention_links(
    weights: torch.Tensor, n_target: int, n_source: int | None = None, steps: Iterable[int] | None = None
) -> frozenset[Link]:
    """Hard alignment read off attention weights: link each target step t to argmax_s alpha_{t,s}.

    Args:
        weights: ``(T, S)`` weights of one sentence (teacher-forced on the gold target, so that step t
            predicts gold token t, or from decoding).
        n_target: number of target WORDS; steps t >= n_target (the <eos> step, padding) are skipped: <eos>
            has no gold link.
        n_source: number of source words; if given, the argmax is over s < n_source only.
        steps: only these target steps (e.g. those with a gold link: attention must put its mass somewhere
            even for a token without counterpart, such as "¿", and Och & Ney's AER would count that as an
            error of the aligner although no link exists to find). Default: every t < n_target.
    """
    _checks.tensor(weights, "weights")
    if weights.dim() != 2:
        raise ValueError(f"weights must be (T, S) for one sentence, got shape {_checks.shape_str(weights)}")
    T, S = weights.shape
    n_target = _checks.positive_int(n_target, "n_target", allow_zero=True)
    _checks.at_most(n_target, "n_target", T, f"weights has only {T} rows (target steps)")
    if n_source is not None:
        n_source = _checks.positive_int(n_source, "n_source")
        _checks.at_most(n_source, "n_source", S, f"weights has only {S} columns (source positions)")
    w = weights[:n_target, :n_source] if n_source is not None else weights[:n_target]
    best = w.argmax(dim=-1).tolist()  # (n_target,)
    keep = range(len(best)) if steps is None else sorted(set(steps) & set(range(len(best))))
    return frozenset((t, best[t]) for t in keep)


def pair_links(weights: torch.Tensor, pair) -> frozenset[Link]:
    """``attention_links`` of one gold-aligned pair (``.src``, ``.tgt``, ``.alignment``), scored where AER
    can score it: at the target words that have a gold link, over the pair's real source words."""
    if pair.alignment is None:
        raise ValueError("pair has no gold alignment (alignment is None): AER needs the toy corpus's links")
    steps = {t for t, _ in pair.alignment}
    return attention_links(weights, len(pair.tgt), len(pair.src), steps)


@torch.no_grad()
def model_alignments(model, batches: Iterable) -> tuple[list[frozenset[Link]], list[frozenset[Link]]]:
    """``(predicted, gold)`` links of every pair in ``batches``, for ``aer(predicted, gold)``.

    The weights are teacher-forced: fed the gold target, step t predicts gold word t, so its weights
    ``alpha_t`` can be compared with the gold links of word t (decoded output may differ from the gold
    words). ``model(batch) -> (logits, weights (B, T, S))`` as the course's Seq2Seq models; each batch
    carries its pairs in ``.examples``.
    """
    device = next(model.parameters()).device
    predicted, gold = [], []
    with evaluating(model):
        for batch in batches:
            _, weights = model(batch.to(device))  # (B, T, S)
            for w, pair in zip(weights.cpu(), batch.examples, strict=True):
                predicted.append(pair_links(w, pair))
                gold.append(frozenset(pair.alignment))
    return predicted, gold


def aer(
    predicted: Iterable[Link] | Sequence[Iterable[Link]],
    sure: Iterable[Link] | Sequence[Iterable[Link]],
    possible: Iterable[Link] | Sequence[Iterable[Link]] | None = None,
) -> float:
    """Alignment error rate, AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|) (Och & Ney 2003), in [0, 1].

    A = predicted links, S = sure gold links, P = possible gold links (S ⊆ P; P = S when not given, which
    is the case for the course's toy corpus). Pass one sentence as sets of ``(t, s)`` pairs, or a corpus as
    lists of sets: the counts are then summed over sentences before dividing (corpus AER, as in Och & Ney).
    """
    if _is_link_set(sure):
        predicted, sure = [predicted], [sure]
        possible = None if possible is None else [possible]
    if possible is None:
        possible = sure
    _same_count(predicted, sure)
    hit_s = hit_p = n_a = n_s = 0
    for a, s, p in zip(predicted, sure, possible, strict=True):
        a, s, p = set(a), set(s), set(p) | set(s)
        hit_s += len(a & s)
        hit_p += len(a & p)
        n_a += len(a)
        n_s += len(s)
    if n_a + n_s == 0:
        return 0.0
    return 1.0 - (hit_s + hit_p) / (n_a + n_s)


def _is_link_set(x) -> bool:
    """A single sentence's links (a set of pairs) as opposed to a corpus (a sequence of sets)."""
    if isinstance(x, (set, frozenset)):
        return True
    x = list(x)
    return len(x) == 0 or (isinstance(x[0], tuple) and len(x[0]) == 2 and isinstance(x[0][0], int))


def _same_count(a: Sequence, b: Sequence) -> None:
    if len(a) != len(b):
        raise ValueError(f"got {len(a)} hypotheses but {len(b)} references")


# ------------------------------------------------------------------- per-sentence scores, for rankings
def exact_scores(hyps: Sequence[Sequence], refs: Sequence[Sequence]) -> TestScores:
    """Exact match per sentence (1 or 0); ``float()`` is :func:`exact_match`."""
    _same_count(hyps, refs)
    return TestScores.mean([float(list(h) == list(r)) for h, r in zip(hyps, refs, strict=True)])


def token_scores(hyps: Sequence[Sequence], refs: Sequence[Sequence]) -> TestScores:
    """Right tokens and reference tokens per sentence; ``float()`` is :func:`token_accuracy`."""
    _same_count(hyps, refs)
    right = [sum(a == b for a, b in zip(h, r, strict=False)) for h, r in zip(hyps, refs, strict=True)]
    return TestScores.ratio(right, [len(r) for r in refs])


def bleu_scores(hyps: Sequence[str | Sequence[str]], refs: Sequence[str | Sequence[str]]) -> TestScores:
    """BLEU's sufficient statistics per sentence (hypothesis and reference length, matched and total n-grams
    for n = 1..4, Papineni et al. 2002, §2.1 and §2.2); ``float()`` is :func:`bleu` with ``tokenize="none"``:
    the counts summed over the corpus, then sacrebleu's formula (Post 2018)."""
    _same_count(hyps, refs)
    rows = []
    for hyp, ref in zip(hyps, refs, strict=True):
        h = hyp.split() if isinstance(hyp, str) else list(hyp)
        r = ref.split() if isinstance(ref, str) else list(ref)
        correct, total = [], []
        for n in range(1, 5):
            h_grams = Counter(tuple(h[i : i + n]) for i in range(len(h) - n + 1))
            r_grams = Counter(tuple(r[i : i + n]) for i in range(len(r) - n + 1))
            correct.append(sum(min(c, r_grams[g]) for g, c in h_grams.items()))  # clipped counts
            total.append(max(0, len(h) - n + 1))
        rows.append([len(h), len(r), *correct, *total])
    return TestScores(rows, "bleu")


def aer_scores(
    predicted: Sequence[Iterable[Link]],
    sure: Sequence[Iterable[Link]],
    possible: Sequence[Iterable[Link]] | None = None,
) -> TestScores:
    """AER's counts per sentence (|A∩S|, |A∩P|, |A|, |S|); ``float()`` is the corpus :func:`aer`."""
    possible = sure if possible is None else possible
    _same_count(predicted, sure)
    _same_count(possible, sure)
    rows = []
    for a, s, p in zip(predicted, sure, possible, strict=True):
        a, s, p = set(a), set(s), set(p) | set(s)
        rows.append([len(a & s), len(a & p), len(a), len(s)])
    return TestScores(rows, "aer")

"""The words of the diagrams, one table per language: WORDS[language][diagram][id] (tools/diagrams.py).

The drawing code names each label by its id (an English word or two) and never holds the words themselves; a
label that is only maths (``$s_t$``) or only a name (``GRU``) stays in the drawing code. The maths inside a
label is matplotlib mathtext and the same in every language (tests/tooling/test_diagrams.py checks it). The
Korean terms are the glossary's (i18n/glossary.yml). A ``{chunk}`` is filled in by the drawing code.
KO_TRANSLATES (at the end) records which English each diagram's Korean translates.
"""

from __future__ import annotations

import hashlib
import json

EN = {
    "rnn-unrolled": {
        "rolled": "(a) one cell, one loop",
        "unrolled": r"(b) unrolled over time: layers that share $W_h$, $W_x$, $b$",
        "backwards": "backwards, the gradient is multiplied by one factor per step",
    },
    "gru-cell": {
        "title": "GRU cell (Cho et al. 2014, in PyTorch's convention): "
        "the old state is added, not multiplied",
        "additive path": "the additive path",
        "reset": r"reset: $r_t = \sigma(W_r x_t + U_r h_{t-1} + b_r)$",
        "update": r"update: $u_t = \sigma(W_u x_t + U_u h_{t-1} + b_u)$",
        "candidate": r"candidate: $n_t = \tanh(W_n x_t + r_t \odot (U_n h_{t-1} + b_{hn}) + b_n)$",
        "note": r"$\partial h_t / \partial h_{t-1}$ contains the term $\mathrm{diag}(u_t)$: "
        r"no $W_h$, no $\tanh'$;   $x_t$ and $h_{t-1}$ enter every gate and the candidate",
    },
    "seq2seq": {
        "without": "(a) without attention: one $c$ for all steps",
        "with": r"(b) with attention: $c_t = \sum_s \alpha_{t,s} h_s$ at every step",
        "encoder": "encoder",
        "decoder": "decoder",
    },
    "dot-product": {
        "query": "query",
        "scores": "1. scores",
        "weights": "2. weights",
        "context": "3. context",
        "concatenate": "4. concatenate",
        "output": "5. output",
        "keys": "keys",
        "values": r"values $h_s$ (the same $H$)",
        "query again": r"the query $s_t$ again",
    },
    "bahdanau-luong": {
        "bahdanau": "(a) Bahdanau et al. (chapter 4): look, then step",
        "luong": "(b) Luong et al. (chapter 5): step, then look",
        "gates": r"GRU: $c_t$ enters the gates $z_t, r_t, n_t$",
        "query": "query",
    },
    "bahdanau-unrolled": {
        "title": "Bahdanau et al. (2015), unrolled: each step looks with $s_{t-1}$, then steps with $c_t$",
        "bidirectional encoder": "bidirectional encoder",
        "query": "query $s_{t-1}$",
        "to the output": "$c_t$ also\nto the output",
        "keys and values": "keys = values = $h_1, \\dots, h_S$\n(the encoder's states)",
    },
    "online-softmax": {
        "title": "The online softmax: one row $e_t$ of scores, read one chunk $J$ of keys at a time",
        "chunk": "chunk ${chunk}$",
        "after": "after ${chunk}$",
        "note": "each rescaling $e^{m - m'} \\leq 1$: no exponent overflows, no chunk is read twice,\n"
        "and the whole row of weights is never stored (Milakov & Gimelshein 2018; Dao et al. 2022)",
    },
    "transformer": {
        "add and norm": r"Add & LayerNorm: $\mathrm{LN}(y + \cdot)$",
        "encoder block": r"encoder block, $\times N$",
        "embedding": "embedding + positions",
        "self-attention": "self-attention (multi-head)",
        "feed-forward": "feed-forward",
        "memory": r"memory $M = [m_1, \dots, m_S]$",
        "decoder block": r"decoder block, $\times N$",
        "causal self-attention": "causal self-attention (multi-head)",
        "cross-attention": "cross-attention (multi-head)",
        "keys, values": r"keys, values: $M$",
        "queries": "queries from the decoder",
        "look-up": r"cross-attention is chapter 5's look-up: "
        r"the decoder's state ($s_t$) queries the encoder's ($h_s$)",
    },
    "kv-cache": {
        "title": r"Decoding step $t$ of a Transformer decoder (one layer shown)",
        "no cache": "(a) no cache: run the prefix again",
        "step 1": "step 1",
        "step t": "step $t$",
        "prefix": r"step $t$ runs positions $1, \dots, t$ through every block",
        "self cost without": r"self-attention: $O(t^2 d)$ per step, $O(T^3 d)$ in all",
        "cross cost without": r"cross-attention: $O(t S d)$ per step, $O(T^2 S d)$ in all",
        "projected again": r"(and $W_k m_s, W_v m_s$ projected again)",
        "cache": "(b) KV cache: one new position",
        "new and kept": r"new: $k_t, v_t$ (green); kept: rows $1, \dots, t-1$",
        "memory": "memory: once\nper sentence",
        "self cost with": r"self-attention: $O(t d)$ per step, $O(T^2 d)$ in all",
        "cross cost with": r"cross-attention: $O(S d)$ per step, $O(T S d)$ in all",
        "cache size": r"the cache holds $2N(t + S)d$ numbers ($N$ layers, keys and values)",
    },
}

KO = {
    "rnn-unrolled": {
        "rolled": "(a) 셀 하나, 루프 하나",
        "unrolled": r"(b) 시간 축으로 펼치면: $W_h$, $W_x$, $b$를 공유하는 층들",
        "backwards": "역전파에서는 기울기에 시점마다 인자가 하나씩 곱해진다",
    },
    "gru-cell": {
        "title": "GRU 셀 (조경현 외 2014, PyTorch의 규약): 이전 상태는 곱해지지 않고 더해진다",
        "additive path": "덧셈 경로",
        "reset": r"리셋: $r_t = \sigma(W_r x_t + U_r h_{t-1} + b_r)$",
        "update": r"업데이트: $u_t = \sigma(W_u x_t + U_u h_{t-1} + b_u)$",
        "candidate": r"후보: $n_t = \tanh(W_n x_t + r_t \odot (U_n h_{t-1} + b_{hn}) + b_n)$",
        "note": r"$\partial h_t / \partial h_{t-1}$에는 항 $\mathrm{diag}(u_t)$가 있다: "
        r"$W_h$도 $\tanh'$도 없다;   $x_t$와 $h_{t-1}$은 모든 게이트와 후보에 들어간다",
    },
    "seq2seq": {
        "without": "(a) 어텐션 없이: 모든 시점에 하나의 $c$",
        "with": r"(b) 어텐션 사용: 시점마다 $c_t = \sum_s \alpha_{t,s} h_s$",
        "encoder": "인코더",
        "decoder": "디코더",
    },
    "dot-product": {
        "query": "쿼리",
        "scores": "1. 스코어",
        "weights": "2. 가중치",
        "context": "3. 컨텍스트 벡터",
        "concatenate": "4. 연결",
        "output": "5. 출력",
        "keys": "키",
        "values": r"값 $h_s$ (같은 $H$)",
        "query again": r"쿼리 $s_t$ 한 번 더",
    },
    "bahdanau-luong": {
        "bahdanau": "(a) 바다나우 어텐션 (4장): 어텐션한 뒤 상태 갱신",
        "luong": "(b) 루옹 어텐션 (5장): 상태 갱신 뒤 어텐션",
        "gates": r"GRU: $c_t$는 게이트 $z_t, r_t, n_t$의 입력",
        "query": "쿼리",
    },
    "bahdanau-unrolled": {
        "title": "바다나우 어텐션(2015)을 펼치면: 매 시점 $s_{t-1}$로 어텐션하고, $c_t$로 상태를 갱신한다",
        "bidirectional encoder": "양방향 인코더",
        "query": "쿼리 $s_{t-1}$",
        "to the output": "$c_t$는\n출력층에도",
        "keys and values": "키 = 값 = $h_1, \\dots, h_S$\n(인코더의 은닉 상태)",
    },
    "online-softmax": {
        "title": "온라인 소프트맥스: 스코어 한 행 $e_t$를 키의 청크 $J$ 단위로 읽는다",
        "chunk": "청크 ${chunk}$",
        "after": "${chunk}$ 이후",
        "note": "재조정 인수는 모두 $e^{m - m'} \\leq 1$: "
        "오버플로가 없고, 어느 청크도 두 번 읽지 않으며,\n"
        "가중치 행 전체를 저장하지 않는다 (Milakov & Gimelshein 2018; Dao 외 2022)",
    },
    "transformer": {
        "add and norm": r"더하기 & 층 정규화: $\mathrm{LN}(y + \cdot)$",
        "encoder block": r"인코더 블록, $\times N$",
        "embedding": "임베딩 + 위치",
        "self-attention": "셀프 어텐션 (멀티 헤드)",
        "feed-forward": "피드 포워드",
        "memory": r"메모리 $M = [m_1, \dots, m_S]$",
        "decoder block": r"디코더 블록, $\times N$",
        "causal self-attention": "인과 셀프 어텐션 (멀티 헤드)",
        "cross-attention": "크로스 어텐션 (멀티 헤드)",
        "keys, values": r"키, 값: $M$",
        "queries": "쿼리는 디코더에서",
        "look-up": r"크로스 어텐션은 5장의 조회: "
        r"디코더의 은닉 상태($s_t$)로 인코더의 은닉 상태($h_s$)를 조회한다",
    },
    "kv-cache": {
        "title": r"트랜스포머 디코더의 디코딩 시점 $t$ (층 하나만 그림)",
        "no cache": "(a) 캐시 없이: 앞부분 전체를 다시 계산",
        "step 1": "시점 1",
        "step t": "시점 $t$",
        "prefix": r"시점 $t$에서 위치 $1, \dots, t$가 모든 블록을 다시 통과",
        "self cost without": r"셀프 어텐션: 시점마다 $O(t^2 d)$, 전체 $O(T^3 d)$",
        "cross cost without": r"크로스 어텐션: 시점마다 $O(t S d)$, 전체 $O(T^2 S d)$",
        "projected again": r"($W_k m_s, W_v m_s$도 다시 계산)",
        "cache": "(b) KV 캐시: 새 위치 하나만",
        "new and kept": r"새로 추가: $k_t, v_t$ (초록); 유지: 행 $1, \dots, t-1$",
        "memory": "메모리: 문장마다\n한 번",
        "self cost with": r"셀프 어텐션: 시점마다 $O(t d)$, 전체 $O(T^2 d)$",
        "cross cost with": r"크로스 어텐션: 시점마다 $O(S d)$, 전체 $O(T S d)$",
        "cache size": r"캐시가 담는 수: $2N(t + S)d$개 ($N$개 층, 키와 값)",
    },
}

WORDS = {"en": EN, "ko": KO}


def english_digest(name: str) -> str:
    """A short hash of the English words of diagram ``name``: what its Korean was translated from."""
    return hashlib.sha256(json.dumps(EN[name], sort_keys=True).encode()).hexdigest()[:12]


# The English each diagram's Korean translates (english_digest): a changed English word fails the diagram
# tests until a translator has updated the Korean and this digest with it (as tools/i18n.py marks a page's
# entry out of date).
KO_TRANSLATES = {
    "rnn-unrolled": "815224c6efb8",
    "gru-cell": "8af784aefc1f",
    "seq2seq": "16a5fb7e42a4",
    "dot-product": "f8d2b8f70062",
    "bahdanau-luong": "9e20511762c5",
    "bahdanau-unrolled": "7d9dc40a91d6",
    "online-softmax": "e72fc697c8ac",
    "transformer": "5ab3a3df75f6",
    "kv-cache": "a41d09a46191",
}

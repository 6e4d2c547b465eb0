"""Chapter 2, "The experiment": both models trained for the fixed budget, measured per source length.

The same run as the chapter's training cell (``train_and_measure``): the reversal task of 5 to 30 digits,
GRU encoder of 64 units per direction, no attention ("plain") and Luong's global "general" attention, 300
Adam steps of 64 pairs at lr 1e-2 with a cosine decay, validation every 50 steps. The chapter trains its first
two seeds live and reads these three from here.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _bottleneck import PROBE_LENGTHS, reversal_data, train_and_measure  # noqa: E402

DESCRIPTION = __doc__.split("\n\n")[0]
SEEDS = [2, 3, 4]  # the chapter trains seeds 0 and 1 live
KINDS = {"plain": {}, "luong": {"score": "general"}}
STEPS, EVAL_EVERY, HIDDEN = 300, 50, 64


def run(seed: int) -> dict:
    data = reversal_data()
    result = {}
    for kind, options in KINDS.items():
        history, measures = train_and_measure(
            data,
            kind,
            seed,
            HIDDEN,
            STEPS,
            EVAL_EVERY,
            step_lengths=PROBE_LENGTHS,
            probe_lengths=PROBE_LENGTHS if kind == "plain" else [30],
            **options,
        )
        result[kind] = {"valid_loss": history.valid_loss, **measures}
    return result

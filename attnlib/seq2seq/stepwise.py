"""Set 5's harness, moved to ``attnlib.grading.stepwise``: this name keeps notebooks saved before the move
working (``from attnlib.seq2seq.stepwise import gru_cell``, ``from attnlib.seq2seq import stepwise``); both
names are the one module object, so its functions and ``THRESHOLDS`` are the same by identity."""

import sys

from attnlib.grading import stepwise

sys.modules[__name__] = stepwise

"""Train and eval modes: ``evaluating(model)`` runs a block in eval mode, then puts the model back as it was.

Dropout (and any other layer that trains differently) must be off when a model is measured or decoded, and
a caller that was training must get its model back in training mode, even if the block raised.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from torch import nn


@contextlib.contextmanager
def evaluating(model: nn.Module) -> Iterator[nn.Module]:
    """``with evaluating(model): ...``: eval mode inside the block, the previous mode restored after it."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)

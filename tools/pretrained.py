"""Write or check the trained models shipped in attnlib/checkpoints (attnlib.pretrained).

    python tools/pretrained.py make [NAME ...]    # retrain and write attnlib/checkpoints/NAME.pt
    python tools/pretrained.py check [NAME ...]   # exit 1 unless retraining gives the stored weights exactly

Training runs in a child process under the course's pinned numeric environment (tools/numeric_env.py), as
the stored notebook outputs do, so that ``check`` compares bit for bit on any x86-64 machine with AVX2.
About 10 s per model on one CPU thread.
"""

from __future__ import annotations

import subprocess
import sys

import numeric_env

CHILD = """
import sys, torch
from attnlib import pretrained
action, name = sys.argv[1], sys.argv[2]
model, task = pretrained.train_recipe(name)
if action == "make":
    print(pretrained.save(name, model, task))
    sys.exit(0)
stored, _ = pretrained.load(name)  # also checks the vocabularies
fresh, kept = model.state_dict(), stored.state_dict()
differ = [k for k in kept if not torch.equal(fresh[k], kept[k])]
print(f"{name}: " + ("differs in " + ", ".join(differ) if differ else "retrained = stored, bit for bit"))
sys.exit(1 if differ else 0)
"""


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("make", "check"):
        print(__doc__)
        return 2
    reason = numeric_env.check(kind="data")
    if reason is not None:
        print(f"cannot {argv[0]} bit for bit here: {reason}")
        return 1
    from attnlib.pretrained import RECIPES

    names = argv[1:] or list(RECIPES)
    unknown = sorted(set(names) - set(RECIPES))
    if unknown:
        print(f"unknown model(s) {unknown}; known: {sorted(RECIPES)}")
        return 2
    failed = 0
    for name in names:
        run = subprocess.run([sys.executable, "-c", CHILD, argv[0], name], env=numeric_env.pinned_env())
        failed += run.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Compute or check the stored results shipped in attnlib/results (attnlib.stored).

    python tools/stored_results.py make NAME [--seeds 0,1,2]   # compute every seed (or these) and write
    python tools/stored_results.py check NAME [--seeds 0,1]    # recompute these seeds (default: all) and
                                                               # exit 1 unless equal, bit for bit
    python tools/stored_results.py check --rotating            # one seed of every recipe, chosen by the
                                                               # commit (the test command runs this)

A recipe is ``tools/recipes/NAME.py`` with ``DESCRIPTION`` (what it computes, for the file), ``SEEDS`` (the
seeds ``make`` computes) and ``run(seed) -> dict`` of plain numbers and lists. Each seed runs in a child
process under the course's pinned numeric environment (tools/numeric_env.py), seeded first as
``attnlib.seeds.over_seeds`` seeds a run, so that ``check`` compares bit for bit on any x86-64 machine with
AVX2. Seeds run two at a time (one thread each).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numeric_env

ROOT = Path(__file__).resolve().parent.parent
RECIPES = ROOT / "tools" / "recipes"
RESULTS = ROOT / "attnlib" / "results"

CHILD = """
import importlib.util, json, sys
from attnlib.train import seed_everything
spec = importlib.util.spec_from_file_location("recipe", sys.argv[1])
recipe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(recipe)
seed = int(sys.argv[2])
seed_everything(seed)
print(json.dumps(recipe.run(seed)))
"""


def recipe_names() -> list[str]:
    return sorted(p.stem for p in RECIPES.glob("*.py") if not p.stem.startswith("_"))


def load_recipe(name: str):
    path = RECIPES / f"{name}.py"
    if not path.is_file():
        raise SystemExit(f"no recipe {name!r}; known: {recipe_names()}")
    spec = importlib.util.spec_from_file_location(f"recipe_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for attribute in ("DESCRIPTION", "SEEDS", "run"):
        if not hasattr(module, attribute):
            raise SystemExit(f"tools/recipes/{name}.py has no {attribute}")
    return module


def compute(name: str, seed: int) -> dict:
    """One seed of the recipe, in a child process under the pinned environment; its result as JSON data."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(RECIPES / f"{name}.py"), str(seed)],
        env=numeric_env.pinned_env(),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{name}, seed {seed} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compute_all(name: str, seeds: list[int]) -> dict[int, dict]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda seed: compute(name, seed), seeds))
    return dict(zip(seeds, results, strict=True))


def environment() -> dict:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch; print(torch.__version__, torch.backends.cpu.get_cpu_capability())",
        ],
        env=numeric_env.pinned_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    torch_version, kernels = done.stdout.split()
    return {"torch": torch_version, "cpu kernels": kernels, "threads": 1}


def make(name: str, seeds: list[int] | None) -> None:
    recipe = load_recipe(name)
    seeds = list(recipe.SEEDS) if seeds is None else seeds
    path = RESULTS / f"{name}.json"
    stored = json.loads(path.read_text())["seeds"] if path.exists() else {}
    stored.update({str(seed): result for seed, result in compute_all(name, seeds).items()})
    data = {
        "name": name,
        "description": recipe.DESCRIPTION,
        "recipe": f"tools/recipes/{name}.py",
        "environment": environment(),
        "seeds": dict(sorted(stored.items(), key=lambda item: int(item[0]))),
    }
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    print(f"written: {path.relative_to(ROOT)} (seeds {sorted(int(s) for s in data['seeds'])})")


def check(name: str, seeds: list[int] | None) -> bool:
    stored = json.loads((RESULTS / f"{name}.json").read_text())["seeds"]
    seeds = sorted(int(s) for s in stored) if seeds is None else seeds
    missing = [s for s in seeds if str(s) not in stored]
    if missing:
        print(f"{name}: seeds {missing} are not stored")
        return False
    fresh = compute_all(name, seeds)
    differ = [s for s in seeds if fresh[s] != stored[str(s)]]
    print(
        f"{name}, seeds {seeds}: "
        + (f"differ on seeds {differ}" if differ else "recomputed = stored, exactly")
    )
    return not differ


def rotating_seed(name: str) -> int:
    """One stored seed of ``name``, chosen by the current commit: each commit checks another."""
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    stored = sorted(int(s) for s in json.loads((RESULTS / f"{name}.json").read_text())["seeds"])
    pick = int(hashlib.sha256(f"{head}:{name}".encode()).hexdigest(), 16) % len(stored)
    return stored[pick]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("action", choices=["make", "check"])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--seeds", type=lambda text: [int(s) for s in text.split(",")])
    parser.add_argument("--rotating", action="store_true", help="check one seed of every recipe")
    args = parser.parse_args(argv)
    reason = numeric_env.check(kind="data")
    if reason is not None:
        print(f"cannot {args.action} bit for bit here: {reason}")
        return 1
    names = args.names or recipe_names()
    if args.action == "make":
        for name in names:
            make(name, args.seeds)
        return 0
    held = [check(name, [rotating_seed(name)] if args.rotating else args.seeds) for name in names]
    return 0 if all(held) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

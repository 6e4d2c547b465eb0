"""One experiment, several seeds: the same function run once per seed, side by side where the machine allows.

    results[i] = run(seeds[i]),   with Python's and torch's RNGs seeded by seeds[i] just before the call

A comparison of trained variants needs several seeds (one seed ranks trajectories, not models). Each run
starts from the caller's state as it is now and seeds the RNGs itself, so a run's result depends only on its
seed: running the seeds one after another or in separate processes gives the same results, bit for bit.
Separate processes are used only where that is safe and helps: on a system that can ``fork`` (Linux), with
torch on one thread per process (the course's pinned environment; forking a process whose thread pool has
run is unsafe), and with more than one core. Elsewhere (Colab's default two threads, macOS, Windows) the
seeds run one after another. Give ``run`` step budgets, not wall-clock ones: two processes on two cores
share the machine.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Callable, Sequence
from typing import TypeVar

import torch

from attnlib.train import seed_everything

T = TypeVar("T")
SEED_BASE = "ATTNLIB_SEED_BASE"


def seed_base() -> int:
    """The first seed of the course's seed lists: ``ATTNLIB_SEED_BASE`` (default 0, the book's runs)."""
    raw = os.environ.get(SEED_BASE, "0")
    try:
        base = int(raw)
    except ValueError:
        raise ValueError(f"{SEED_BASE} must be a non-negative integer, got {raw!r}") from None
    if base < 0:
        raise ValueError(f"{SEED_BASE} must be a non-negative integer, got {raw!r}")
    return base


def course_seeds(n: int) -> list[int]:
    """The ``n`` seeds a chapter averages over: ``[base, base + 1, ..., base + n - 1]``.

    The book runs from base 0. The course's stand-in for a learner's machine (tests/colab) runs every notebook
    from another base, so that a claim which holds only for the book's seeds fails there: a statement about
    the seeds must hold for any seeds. Data sets keep their own fixed seeds; these draw initial weights and
    batch orders.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive number of seeds, got {n!r}")
    base = seed_base()
    return list(range(base, base + n))


def parallel_workers(n_runs: int) -> int:
    """How many processes :func:`over_seeds` uses for ``n_runs`` runs on this machine (1: in this process)."""
    if "fork" not in multiprocessing.get_all_start_methods() or torch.get_num_threads() != 1:
        return 1
    return max(1, min(n_runs, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))


def _seeded(run: Callable[[int], T], seed: int) -> T:
    seed_everything(seed)
    return run(seed)


def _child(run: Callable[[int], T], seed: int, conn) -> None:
    """In a forked process: run one seed and send back its pickled result or its error."""
    try:
        reply = ("ok", pickle.dumps(_seeded(run, seed)))
    except BaseException as error:  # noqa: BLE001 - every failure goes back to the caller
        try:
            reply = ("error", pickle.dumps(error))
        except Exception:  # an error that cannot be pickled goes back as its text
            reply = ("error", pickle.dumps(RuntimeError(repr(error))))
    conn.send_bytes(pickle.dumps(reply))
    conn.close()


def _in_processes(run: Callable[[int], T], seeds: list[int], workers: int) -> list[T]:
    """Each seed in a fresh fork of this process, ``workers`` at a time, results in the order of ``seeds``."""
    context = multiprocessing.get_context("fork")
    results: dict[int, T] = {}
    for first in range(0, len(seeds), workers):
        running = []
        for seed in seeds[first : first + workers]:
            receive, send = context.Pipe(duplex=False)
            process = context.Process(target=_child, args=(run, seed, send), daemon=True)
            process.start()
            send.close()
            running.append((seed, process, receive))
        try:
            for seed, process, receive in running:
                try:
                    status, payload = pickle.loads(receive.recv_bytes())  # plain pickle: no shared memory
                except EOFError:
                    process.join()
                    raise RuntimeError(
                        f"the run with seed {seed} died (exit code {process.exitcode})"
                    ) from None
                process.join()
                if status == "error":
                    error = pickle.loads(payload)
                    if hasattr(error, "add_note"):  # Python 3.11+
                        error.add_note(f"(in the run with seed {seed}, in a separate process)")
                    raise error
                results[seed] = pickle.loads(payload)
        finally:  # after an error, the other runs of the batch are not left behind
            for _, process, receive in running:
                if process.is_alive():
                    process.terminate()
                    process.join()
                receive.close()
    return [results[seed] for seed in seeds]


def over_seeds(run: Callable[[int], T], seeds: Sequence[int], workers: int | None = None) -> list[T]:
    """``[run(seed) for seed in seeds]``, each call after seeding the RNGs with its seed.

    Args:
        run: ``f(seed) -> result``; any callable (a closure or lambda too: forked processes inherit it);
            its result must be picklable when the runs go to other processes (numbers, lists, dicts,
            tensors, state dicts, most models).
        seeds: distinct integers.
        workers: processes to use; None picks :func:`parallel_workers`; 1 runs in this process.
    """
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds is empty: give at least one seed")
    if any(not isinstance(seed, int) or isinstance(seed, bool) for seed in seeds):
        raise TypeError(f"seeds must be integers, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct (a repeated seed repeats a run), got {seeds}")
    if workers is None:
        workers = parallel_workers(len(seeds))
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if workers == 1 or len(seeds) == 1:
        return [_seeded(run, seed) for seed in seeds]
    return _in_processes(run, seeds, workers)

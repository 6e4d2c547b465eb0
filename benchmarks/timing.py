"""Timing for chapter 7's measured tables (attnlib/results/ch07_*.json): the batched path they time, the
clock, and what a benchmark ran on.

A time means little without the machine: the processor, its caches (the sizes that decide whether a tensor
stays close to the core), the vector instructions it has (bfloat16 arithmetic needs its own), the torch that
ran, the threads, and how busy the machine was. On a shared machine a call longer than a scheduler time slice
(a few milliseconds) is likely to be interrupted by another process: ``describe`` records the scheduling
policy, so that a table measured with a real-time priority (``chrt -f 10 ...``, no interruptions by ordinary
processes) says so.
"""

from __future__ import annotations

import math
import os
import platform
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from attnlib.hardware import cache_sizes_kib, cpu_flags


def fully_batched(Q, H, padding):
    """Chapter 7's batched path: padding (B, 1, S) is True where there is no word."""
    E = Q @ H.transpose(-2, -1)  # (B, T, S)
    return torch.softmax(E.masked_fill(padding, -math.inf), dim=-1) @ H  # (B, T, d)


def synchronize(device: torch.device) -> None:
    """Wait for the GPU: its calls return before the work is done."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def fastest(calls: dict, device: torch.device, rounds: int) -> dict:
    """{name: fastest seconds of ``rounds`` calls}, every call once per round after a warm-up round: the
    calls take turns, so that a busy machine slows them alike."""
    best = dict.fromkeys(calls, math.inf)
    for repeat in range(rounds + 1):
        for name, fn in calls.items():
            synchronize(device)
            start = time.perf_counter()
            fn()
            synchronize(device)
            if repeat:
                best[name] = min(best[name], time.perf_counter() - start)
    return best


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def describe(device: torch.device) -> dict:
    """The machine, the software and the load, as a JSON-ready dict."""
    policy = {os.SCHED_OTHER: "normal", os.SCHED_FIFO: "real-time FIFO", os.SCHED_RR: "real-time RR"}
    info = {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU: {cpu_name()}",
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "cpu_kernels": torch.backends.cpu.get_cpu_capability(),
        "cpu_flags": cpu_flags(),
        "caches_kib": cache_sizes_kib(),
        "scheduling": policy.get(os.sched_getscheduler(0), "other")
        if hasattr(os, "sched_getscheduler")
        else "",
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"),
    }
    if hasattr(os, "getloadavg"):
        info["load_average_1min"] = round(os.getloadavg()[0], 2)
    return info

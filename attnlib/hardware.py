"""What the processor offers an attention kernel: its cache sizes and its 16-bit arithmetic instructions.

Two facts decide much of chapter 7's timings. The caches: a tensor that fits in a core's L2 (or the L3 the
cores share) is read back far faster than one that must come from main memory, so a path that writes and
rereads a ``(B, T, S)`` tensor slows down once that tensor outgrows them, and a fused kernel that keeps one
tile of scores does not. The instructions: an x86 CPU multiplies ``bfloat16`` numbers natively only with
AVX512-BF16 or AMX-BF16 (``float16``: AVX512-FP16, AMX-FP16; ARM: its BF16 extension); without them a
kernel converts each 16-bit number to float32 before multiplying: 16 bits save bytes but cost conversions.

Both are read from Linux (``/sys/devices/system/cpu``, ``/proc/cpuinfo``); elsewhere they are empty, and the
lesson says it cannot tell. ``torch.backends.cpu.get_cpu_capability()`` says which of its vector kernels torch
uses (it may be capped below what the processor has, as the course's pinned environment caps it at AVX2).
Lesson: chapter 7, "Bytes moved, and the caches" and "Reduced precision".
"""

from __future__ import annotations

from pathlib import Path

# Linux's names for the instructions that make 16-bit floats fast (avx2, avx512f: the vector widths); x86's,
# and "bf16", ARM's BF16 extension
PRECISION_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_fp16", "bf16")
BF16_ARITHMETIC = ("avx512_bf16", "amx_bf16", "bf16")  # any one multiplies bfloat16 numbers natively
_CPU = Path("/sys/devices/system/cpu/cpu0/cache")
_CPUINFO = Path("/proc/cpuinfo")


def parse_size_kib(text: str) -> int:
    """Linux's cache size text ("32K", "1M", "1024", bytes without a unit) -> KiB."""
    text = text.strip()
    units = {"K": 1, "M": 1024, "G": 1024 * 1024}
    if text and text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    if text.isdigit():
        return int(text) // 1024
    raise ValueError(f"not a cache size: {text!r} (expected e.g. '32K', '1M')")


def cache_sizes_kib(folder: Path = _CPU) -> dict[str, int]:
    """Data and unified caches of CPU 0 by level, in KiB: e.g. ``{"L1d": 32, "L2": 512, "L3": 32768}``
    (the L3 is shared by several cores). Empty where Linux's sysfs is not there (macOS, Windows)."""
    sizes = {}
    for index in sorted(folder.glob("index*")) if folder.is_dir() else []:
        kind = (index / "type").read_text().strip()
        if kind == "Instruction":
            continue
        name = f"L{(index / 'level').read_text().strip()}{'d' if kind == 'Data' else ''}"
        sizes[name] = parse_size_kib((index / "size").read_text())
    return sizes


def parse_flags(cpuinfo: str) -> dict[str, bool]:
    """Which of ``PRECISION_FLAGS`` the first ``flags`` (x86) or ``Features`` (ARM) line of a /proc/cpuinfo
    text lists; empty if it has neither."""
    for line in cpuinfo.splitlines():
        if line.startswith(("flags", "Features")):
            words = set(line.split(":", 1)[1].split())
            return {flag: flag in words for flag in PRECISION_FLAGS}
    return {}


def cpu_flags(path: Path = _CPUINFO) -> dict[str, bool]:
    """``{flag: present}`` for ``PRECISION_FLAGS`` on this processor; empty where /proc/cpuinfo is missing."""
    return parse_flags(path.read_text()) if path.is_file() else {}


def has_bf16_arithmetic(flags: dict[str, bool]) -> bool | None:
    """True if the processor multiplies bfloat16 natively, False if not, None if the flags are unknown."""
    if not flags:
        return None
    return any(flags.get(flag, False) for flag in BF16_ARITHMETIC)

"""attnlib.hardware: cache sizes and 16-bit instructions, read from Linux's own files."""

import pytest

from attnlib import hardware


@pytest.mark.parametrize(
    ("text", "kib"), [("32K", 32), ("512K", 512), ("1M", 1024), ("32768K", 32768), ("2097152", 2048)]
)
def test_a_cache_size_text_is_read_in_kib(text, kib):
    assert hardware.parse_size_kib(text) == kib


def test_a_size_that_is_not_one_is_an_error_naming_it():
    with pytest.raises(ValueError, match="'fast'"):
        hardware.parse_size_kib("fast")


def _cache(folder, index, level, kind, size):
    entry = folder / f"index{index}"
    entry.mkdir(parents=True)
    (entry / "level").write_text(f"{level}\n")
    (entry / "type").write_text(f"{kind}\n")
    (entry / "size").write_text(f"{size}\n")


def test_cache_sizes_leave_out_the_instruction_cache_and_name_the_levels(tmp_path):
    _cache(tmp_path, 0, 1, "Data", "32K")
    _cache(tmp_path, 1, 1, "Instruction", "32K")
    _cache(tmp_path, 2, 2, "Unified", "512K")
    _cache(tmp_path, 3, 3, "Unified", "32768K")
    assert hardware.cache_sizes_kib(tmp_path) == {"L1d": 32, "L2": 512, "L3": 32768}


def test_without_sysfs_the_cache_sizes_are_unknown(tmp_path):
    assert hardware.cache_sizes_kib(tmp_path / "absent") == {}


def test_flags_are_read_from_the_first_flags_line():
    cpuinfo = "processor : 0\nflags : fpu avx2 avx512f avx512_bf16\nprocessor : 1\nflags : fpu\n"
    flags = hardware.parse_flags(cpuinfo)
    assert flags["avx2"] and flags["avx512f"] and flags["avx512_bf16"]
    assert not flags["amx_bf16"] and not flags["avx512_fp16"]
    assert hardware.has_bf16_arithmetic(flags) is True


def test_an_avx2_processor_has_no_bf16_arithmetic():
    flags = hardware.parse_flags("flags : fpu sse avx avx2 fma\n")
    assert flags["avx2"] and hardware.has_bf16_arithmetic(flags) is False


def test_arm_features_are_read_too():
    flags = hardware.parse_flags("Features : fp asimd bf16 i8mm\n")
    assert hardware.has_bf16_arithmetic(flags) is True


def test_unknown_flags_say_so_rather_than_no():
    assert hardware.parse_flags("model name : something\n") == {}
    assert hardware.has_bf16_arithmetic({}) is None


def test_this_machine_reports_its_caches_and_flags_as_plain_data():
    caches, flags = hardware.cache_sizes_kib(), hardware.cpu_flags()
    assert all(isinstance(k, str) and isinstance(v, int) and v > 0 for k, v in caches.items())
    assert all(isinstance(v, bool) for v in flags.values())

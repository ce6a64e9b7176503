"""The machine a benchmark ran on, printed with its figures (docs/benchmarks.md
names it for every figure): CPU model, cores, the SIMD flags winnow's kernels
choose by, transparent huge pages, the kernel, the free 2 MB blocks when the
benchmark started and memory. The C++ benchmarks print the same fields
(bench_support.h, machine_json)."""

import os

SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni")


def _first(path, prefix):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(prefix):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def selected_setting(path):
    """The selected value of a sysfs choice such as 'always [madvise] never', or a
    plain setting's value ('' if unreadable)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return ""
    start, end = text.find("["), text.find("]")
    return text[start + 1:end] if 0 <= start < end else text.strip()


def free_2mb_blocks():
    """Free blocks of 2 MB or more in /proc/buddyinfo, in 2 MB pages (-1: unreadable)."""
    try:
        with open("/proc/buddyinfo") as f:
            lines = f.readlines()
    except OSError:
        return -1
    count = 0
    for line in lines:
        orders = [int(n) for n in line.split()[4:]]
        count += sum(n << (order - 9) for order, n in enumerate(orders) if order >= 9)
    return count


FREE_2MB_BLOCKS_AT_START = free_2mb_blocks()  # read on import, before the benchmark runs


def machine():
    flags = set(_first("/proc/cpuinfo", "flags").split())
    mem_kib = _first("/proc/meminfo", "MemTotal").split()
    return {
        "cpu": _first("/proc/cpuinfo", "model name"),
        "cores": os.cpu_count(),
        "simd": [f for f in SIMD_FLAGS if f in flags],
        "transparent_hugepages": selected_setting("/sys/kernel/mm/transparent_hugepage/enabled"),
        "transparent_hugepages_defrag": selected_setting("/sys/kernel/mm/transparent_hugepage/defrag"),
        "kernel": os.uname().release,
        "free_2mb_blocks": FREE_2MB_BLOCKS_AT_START,
        "virtual_machine": "hypervisor" in flags,
        "memory_gib": round(int(mem_kib[0]) / (1 << 20), 1) if mem_kib else None,
    }

"""The machine a benchmark ran on, printed with its figures (docs/benchmarks.md
names it for every figure): CPU model, cores, the SIMD flags winnow's kernels
choose by, transparent huge pages and memory. The C++ benchmarks print the same
fields (bench_support.h, machine_json)."""

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


def _bracketed(path):
    """The selected value of a sysfs choice such as 'always [madvise] never'."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return ""
    start, end = text.find("["), text.find("]")
    return text[start + 1:end] if 0 <= start < end else text.strip()


def machine():
    flags = set(_first("/proc/cpuinfo", "flags").split())
    mem_kib = _first("/proc/meminfo", "MemTotal").split()
    return {
        "cpu": _first("/proc/cpuinfo", "model name"),
        "cores": os.cpu_count(),
        "simd": [f for f in SIMD_FLAGS if f in flags],
        "transparent_hugepages": _bracketed("/sys/kernel/mm/transparent_hugepage/enabled"),
        "transparent_hugepages_defrag": _bracketed("/sys/kernel/mm/transparent_hugepage/defrag"),
        "virtual_machine": "hypervisor" in flags,
        "memory_gib": round(int(mem_kib[0]) / (1 << 20), 1) if mem_kib else None,
    }

#!/usr/bin/env python3
"""Run commands on a machine whose free memory has no free 2 MB page left.

A long-running machine often has its free memory in small pieces. Under THP
`defrag` settings that let a page fault not compact memory (`never`, `defer`),
memory advised for huge pages then gets 4 KB pages at fault time, and
`AnonHugePages` stays at 0 kB. This script makes that state on purpose, as
root, runs each command in it, and puts the settings back:

  1. sets THP `defrag` to `never` and `vm.compaction_proactiveness` to 0
     (no background compaction);
  2. maps all free memory but 2 GiB in 4 KB pages and frees every other page;
  3. before each command, takes the 2 MB blocks still free (a mapping
     advised for huge pages, touched once per 2 MB) until /proc/buddyinfo
     shows none, or the kernel's watermarks keep the last few.

  sudo bench/fragmented_memory.py -- CMD [ARG...] [--- CMD [ARG...]]...
"""
import mmap
import subprocess
import sys

from machine import free_2mb_blocks, selected_setting

DEFRAG = "/sys/kernel/mm/transparent_hugepage/defrag"
PROACTIVENESS = "/proc/sys/vm/compaction_proactiveness"
PAGE = mmap.PAGESIZE
HUGE = 2 << 20


def write_setting(path, value):
    with open(path, "w") as f:
        f.write(value)


def free_kib():
    for line in open("/proc/meminfo"):
        if line.startswith("MemFree:"):
            return int(line.split()[1])
    raise RuntimeError("/proc/meminfo has no MemFree")


def fragment(leave_mib=2048):
    size = (free_kib() * 1024 - (leave_mib << 20)) // PAGE * PAGE
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory.madvise(mmap.MADV_NOHUGEPAGE)
    chunk = 64 << 20
    for offset in range(0, size, chunk):
        memory[offset:offset + min(chunk, size - offset)] = b"\1" * min(chunk, size - offset)
    for offset in range(PAGE, size, 2 * PAGE):
        memory.madvise(mmap.MADV_DONTNEED, offset, PAGE)
    return memory


def take_free_huge_blocks(held):
    """Maps free 2 MB blocks onto huge pages until none is left, or until the
    kernel keeps the rest (its watermarks) and a round takes none."""
    for _ in range(16):
        before = free_2mb_blocks()
        if before == 0:
            return
        memory = mmap.mmap(-1, before * HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        memory.madvise(mmap.MADV_HUGEPAGE)
        for offset in range(0, before * HUGE, HUGE):
            memory[offset] = 1
        held.append(memory)
        if free_2mb_blocks() >= before:
            return


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    commands, current = [], []
    for arg in argv[argv.index("--") + 1:]:
        if arg == "---":
            commands.append(current)
            current = []
        else:
            current.append(arg)
    commands.append(current)
    saved = {path: selected_setting(path) for path in (DEFRAG, PROACTIVENESS)}
    unreadable = [path for path, value in saved.items() if not value]
    if unreadable:
        sys.exit(f"fragmented_memory: cannot read {', '.join(unreadable)}")
    held = []
    try:
        write_setting(DEFRAG, "never")
        write_setting(PROACTIVENESS, "0")
        held.append(fragment())
        status = 0
        for command in commands:
            take_free_huge_blocks(held)
            print(f"fragmented_memory: {free_kib() >> 10} MiB free, "
                  f"{free_2mb_blocks()} free 2 MB blocks: {' '.join(command)}", flush=True)
            status = subprocess.call(command) or status
        return status
    finally:
        for path, value in saved.items():
            write_setting(path, value)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The process's own metrics, as Prometheus' client libraries name them, read from /proc.

`process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
`process_open_fds`, `process_max_fds` and `process_start_time_seconds`: the names every Prometheus
dashboard and alert already knows. Read at each scrape (a few small files); on a system without
/proc (not Linux) the families are left out rather than guessed. The parsing is pure, so it is
tested on text, and the reading at the edge.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class ProcessSample:
    cpu_seconds: float
    resident_bytes: int
    virtual_bytes: int
    start_time: float  # seconds since the epoch
    open_fds: int
    max_fds: int | None


def parse_stat(stat: str, ticks: int, page_size: int, boot_time: float) -> tuple[float, int, int, float]:
    """(cpu seconds, resident bytes, virtual bytes, start time) from /proc/self/stat: the fields
    after the command name, which is in parentheses and may itself hold spaces or parentheses."""
    fields = stat[stat.rindex(")") + 2:].split()
    # fields[0] is field 3 (state): utime 14, stime 15, starttime 22, vsize 23, rss 24
    utime, stime = int(fields[11]), int(fields[12])
    start = int(fields[19]) / ticks + boot_time
    return (utime + stime) / ticks, int(fields[21]) * page_size, int(fields[20]), start


def parse_boot_time(proc_stat: str) -> float:
    for line in proc_stat.splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise ValueError("/proc/stat has no btime line")


def parse_max_fds(limits: str) -> int | None:
    for line in limits.splitlines():
        if line.startswith("Max open files"):
            soft = line.split()[3]
            return None if soft == "unlimited" else int(soft)
    return None


def sample(proc: Path = PROC) -> ProcessSample | None:
    """The process's figures now, or None where /proc cannot be read."""
    try:
        ticks = os.sysconf("SC_CLK_TCK")
        page = os.sysconf("SC_PAGE_SIZE")
        boot = parse_boot_time((proc / "stat").read_text())
        cpu, rss, vsize, start = parse_stat((proc / "self" / "stat").read_text(), ticks, page, boot)
        fds = len(os.listdir(proc / "self" / "fd"))
        max_fds = parse_max_fds((proc / "self" / "limits").read_text())
    except (OSError, ValueError, IndexError):
        return None
    return ProcessSample(cpu, rss, vsize, start, fds, max_fds)


def render(current: ProcessSample | None) -> list[str]:
    """The families in the text exposition format (nothing when there is no sample)."""
    if current is None:
        return []
    families = [
        ("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
         current.cpu_seconds),
        ("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", current.resident_bytes),
        ("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", current.virtual_bytes),
        ("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
         current.start_time),
        ("process_open_fds", "gauge", "Number of open file descriptors.", current.open_fds),
    ]
    if current.max_fds is not None:
        families.append(("process_max_fds", "gauge", "Maximum number of open file descriptors.", current.max_fds))
    lines: list[str] = []
    for name, kind, help_text, value in families:
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name} {_number(value)}"]
    return lines


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))

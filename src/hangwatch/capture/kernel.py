"""The kernel log, for the window since the job started: NVIDIA Xid/SXid, a GPU fallen off the bus,
amdgpu faults and hogged-CPU warnings, OOM-killer lines, hung-task warnings, NFS servers not
responding. Read from /dev/kmsg (each read returns one record, non-blocking); where that is not
permitted it is a note, never an error. ``$HANGWATCH_KMSG_FILE`` reads a saved log instead
(``dmesg``, ``dmesg -T``, ``journalctl -k``, syslog or raw kmsg text; every line of it counts, whatever
its time: tests, and a log saved from a node)."""

from __future__ import annotations

import errno
import os
import re
import time
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from hangwatch.capture.kmsg import FILE_ENV, KMSG, MAX_EVENTS, NOT_READABLE, KmsgCursor
from hangwatch.records.gpu import KernelEvent
from hangwatch.redact import redact_text


def read_cursor(cursor: KmsgCursor) -> tuple[KernelEvent, ...]:
    """Every event since ``cursor`` was opened (the newest MAX_EVENTS); a saved log is read whole, once."""
    if cursor.saved and not cursor.events and cursor.note is None:
        cursor.events = list(read_kernel_events(0.0, {FILE_ENV: cursor.saved})[0])
    if cursor.fd is not None:
        booted = boot_time()
        try:
            for record in _read_records(cursor.fd):
                at, message = parse_kmsg_record(record, booted)
                ev = classify(message, at)
                if ev is not None:
                    cursor.events.append(ev)
        except OSError as e:
            cursor.note = f"the kernel log could not be read ({KMSG}: {e.strerror or e})"
        del cursor.events[:-MAX_EVENTS]
    return tuple(cursor.events[-MAX_EVENTS:])


MAX_RECORDS = 200_000  # the ring buffer is bounded (16 MiB at most: ~160k records); so is our read

XID = re.compile(
    r"NVRM: Xid \((?P<dev>[^)]*)\): (?P<code>\d+)(?:, pid=(?P<pid>\d+|'<unknown>'))?"
    r"(?:, name=(?P<name>[^,]*))?"
)
SXID = re.compile(r"SXid \((?P<dev>[^)]*)\): (?P<code>\d+)")
OFF_BUS = re.compile(
    r"NVRM: GPU (?:at )?(?P<dev>\S+?):? has fallen off the bus|GPU has fallen off the bus|"
    r"fallen off the bus and is not responding"
)
AMD_HOG = re.compile(r"workqueue: (?P<work>\S+) \[amdgpu\] hogged CPU for >(?P<us>\d+)us")
AMD_FAULT = re.compile(
    r"amdgpu[^:]*:.*(?:ring \S+ timeout|MES failed to respond|GPU reset begin|GPU reset\(|"
    r"VM_L2_PROTECTION_FAULT|(?<!retry )page fault \(src_id)|\*ERROR\* ring \S+ timeout"
)
OOM = re.compile(
    r"(?:Out of memory|Memory cgroup out of memory): Killed process (?P<pid>\d+) "
    r"\((?P<name>.+?)\)(?=[ ,]|$)"
)
OOM_TASK = re.compile(r"oom-kill:.*\btask=(?P<name>[^,]+),pid=(?P<pid>\d+)")
HUNG = re.compile(r"INFO: task (?P<name>.+):(?P<pid>\d+) blocked for more than (?P<s>\d+) seconds")
NFS_DOWN = re.compile(r"nfs: server (?P<server>\S+) not responding")
NFS_OK = re.compile(r"nfs: server (?P<server>\S+) OK")
DMESG_TIME = re.compile(r"^\[\s*(?P<s>\d+\.\d+)\]\s?")
CTIME = re.compile(r"^\[(?P<ctime>\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]\s?")  # dmesg -T
SYSLOG = re.compile(r"^(?:\w{3} +\d+ \d\d:\d\d:\d\d \S+ )?kernel:\s?", re.IGNORECASE)  # journalctl/syslog, no year
ISO_TIME = re.compile(r"^(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:?\d\d|Z)?)\s+\S+\s+kernel:\s?")


def classify(text: str, at: float | None) -> KernelEvent | None:
    """The event a kernel log message means, or None for the lines that do not matter here. The text
    kept is redacted (a process's command line can reach the kernel log)."""
    ev = _classify(text, at)
    return None if ev is None else replace(ev, text=redact_text(ev.text)[:500])


def _classify(text: str, at: float | None) -> KernelEvent | None:
    if m := XID.search(text):
        pid = m.group("pid")
        name = (m.group("name") or "").strip()
        return KernelEvent(
            at,
            "xid",
            text.strip(),
            code=int(m.group("code")),
            pid=int(pid) if pid and pid.isdigit() else None,
            name=name if name and name != "<unknown>" else None,
            device=m.group("dev"),
        )
    if m := SXID.search(text):
        return KernelEvent(at, "sxid", text.strip(), code=int(m.group("code")), device=m.group("dev"))
    if m := OFF_BUS.search(text):
        return KernelEvent(at, "fell_off_bus", text.strip(), device=m.group("dev"))
    if m := AMD_HOG.search(text):
        return KernelEvent(at, "amdgpu_hog", text.strip(), name=m.group("work"))
    if AMD_FAULT.search(text):
        return KernelEvent(at, "amdgpu_fault", text.strip())
    if m := OOM.search(text) or OOM_TASK.search(text):
        return KernelEvent(at, "oom_kill", text.strip(), pid=int(m.group("pid")), name=m.group("name").strip())
    if m := HUNG.search(text):
        return KernelEvent(at, "hung_task", text.strip(), pid=int(m.group("pid")), name=m.group("name"))
    if m := NFS_DOWN.search(text):
        return KernelEvent(at, "nfs_down", text.strip(), name=m.group("server"))
    if m := NFS_OK.search(text):
        return KernelEvent(at, "nfs_ok", text.strip(), name=m.group("server"))
    return None


def boot_time() -> float:
    """Unix time of boot (kmsg stamps are microseconds since then)."""
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except OSError:
        pass
    return time.time() - time.monotonic()


def parse_kmsg_record(record: str, booted: float) -> tuple[float | None, str]:
    """(unix time, message) of one /dev/kmsg record: ``pri,seq,usec,flags;message``; continuation
    lines (`` KEY=value``) are dropped."""
    head, sep, message = record.partition(";")
    if not sep:
        return None, record
    parts = head.split(",")
    try:
        at = booted + int(parts[2]) / 1e6
    except (IndexError, ValueError):
        at = None
    return at, message.split("\n", 1)[0]


def parse_lines(lines: Iterable[str], booted: float) -> list[tuple[float | None, str]]:
    """(time, message) of each line of a saved log: kmsg records, ``dmesg`` (``[ 123.456] msg``),
    ``journalctl -k -o short-iso``, or bare messages (no time)."""
    out: list[tuple[float | None, str]] = []
    for raw in lines:
        line = raw.strip()
        if not line or re.match(r"^[A-Z_]+=", line):  # kmsg continuation (KEY=value) lines
            continue
        if m := SYSLOG.match(line):
            line = line[m.end() :]  # the syslog time has no year: the line counts as "no time" unless dmesg's follows
        if m := CTIME.match(line):
            try:
                at_ctime: float | None = datetime.strptime(m.group("ctime"), "%a %b %d %H:%M:%S %Y").timestamp()
            except ValueError:
                at_ctime = None
            out.append((at_ctime, line[m.end() :]))
        elif m := DMESG_TIME.match(line):
            out.append((booted + float(m.group("s")), line[m.end() :]))
        elif m := ISO_TIME.match(line):
            try:
                at: float | None = datetime.fromisoformat(m.group("iso").replace("Z", "+00:00")).timestamp()
            except ValueError:
                at = None
            out.append((at, line[m.end() :]))
        elif re.match(r"^\d+,\d+,\d+,[^;]*;", line):
            out.append(parse_kmsg_record(line, booted))
        else:
            out.append((None, line))
    return out


def _read_records(fd: int) -> list[str]:
    """Every record from the fd's position to the end of the buffer (non-blocking)."""
    records = []
    for _ in range(MAX_RECORDS):
        try:
            raw = os.read(fd, 8192)
        except BlockingIOError:
            break  # the end of the buffer
        except OSError as e:
            if e.errno == errno.EPIPE:  # a record was overwritten while we read: skip on
                continue
            raise
        if not raw:
            break
        records.append(raw.decode(errors="replace"))
    return records


def _read_kmsg() -> list[str]:
    fd = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
    try:
        return _read_records(fd)
    finally:
        os.close(fd)


def read_kernel_events(since: float, env: dict[str, str] | None = None) -> tuple[tuple[KernelEvent, ...], str | None]:
    """The events since ``since`` (unix time; a little before, for clocks that disagree), newest
    MAX_EVENTS; and a note when the log could not be read."""
    env = dict(os.environ) if env is None else env
    booted = boot_time()
    saved = env.get(FILE_ENV)
    try:
        if saved:
            pairs = parse_lines(Path(saved).read_text(errors="replace").splitlines(), booted)
        else:
            pairs = [parse_kmsg_record(r, booted) for r in _read_kmsg()]
    except PermissionError:
        return (), NOT_READABLE
    except OSError as e:
        return (), f"the kernel log could not be read ({saved or KMSG}: {e.strerror or e})"
    events = []
    for at, message in pairs:
        if not saved and at is not None and at < since - 5:  # a saved log stands for this run: no window
            continue
        ev = classify(message, at)
        if ev is not None:
            events.append(ev)
    return tuple(events[-MAX_EVENTS:]), None

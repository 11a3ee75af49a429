"""Who maps what: /proc/PID/maps read for shared files, a multiprocessing semaphore's (capture/waits.py) and a
multiprocessing heap's, whose Value a loop may poll (``heap_sharers``)."""

from __future__ import annotations

import re

from hangwatch.capture import proc
from hangwatch.records.values import frozen


@frozen
class Mapping:
    """One line of /proc/PID/maps: its address range and the file mapped."""

    start: int
    end: int
    key: str  # "dev inode" of the mapped file
    path: str


def mappings(pid: int, marker: str) -> list[Mapping]:
    """The mappings of process ``pid`` whose line holds ``marker`` (none where its maps are unreadable)."""
    return parsed_maps(proc.read_text(proc.PROC / str(pid) / "maps") or "", marker)


def parsed_maps(text: str, marker: str) -> list[Mapping]:
    """The lines of a maps file's ``text`` that hold ``marker``, each as its range and file."""
    out = []
    for line in text.splitlines():
        if marker not in line:
            continue
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        lo, hi = parts[0].split("-")
        out.append(Mapping(int(lo, 16), int(hi, 16), f"{parts[3]} {parts[4]}", parts[5].replace(" (deleted)", "")))
    return out


HEAP_MAPPING = "/pym-"  # multiprocessing's heap (Value, Array): /dev/shm/pym-PID-*, or a file in its temp dir
_CREATOR = re.compile(r"/pym-(\d+)-")  # the process that made the heap's file


def heap_sharers(pid: int) -> tuple[int, ...] | None:
    """The other processes of the host (``proc.list_pids``) that map any file of ``pid``'s multiprocessing heap (by
    device and inode): any of them may write a Value in it (a child, a daemon forked off, the parent of a process
    attached to). None where the maps of a living one could not be read, unless it started before the heap's oldest
    creator (``pym-PID-``: a container's init did not inherit it): it may map it too."""
    heap = mappings(pid, HEAP_MAPPING)
    creators = {pid} | {int(m.group(1)) for h in heap if (m := _CREATOR.search(h.path))}
    born = [st.starttime for c in creators if (st := proc.read_stat(proc.PROC / str(c) / "stat")) is not None]
    if not heap or not born:
        return ()
    keys, out = {h.key for h in heap}, []
    for q in proc.list_pids():
        text = proc.read_text(proc.PROC / str(q) / "maps") if q != pid else ""
        st = proc.read_stat(proc.PROC / str(q) / "stat") if text is None else None
        if st is not None and st.starttime >= min(born):
            return None
        if any(m.key in keys for m in parsed_maps(text or "", HEAP_MAPPING)):
            out.append(q)
    return tuple(out)

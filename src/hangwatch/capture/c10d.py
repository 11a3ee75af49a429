"""What a rank blocked in one of torch's collective or point-to-point calls waits on, read from the call's own
arguments with one py-spy --locals read: the peer of a ``dist.send``/``dist.recv`` (``dst``, ``src``), and
whether a collective runs on the default group (every rank of the job) or on a group of the user's. The
wait-for graph draws its rank-to-rank edges from it: a rank in a collective of the default group waits for
every rank not in it; a rank that sends waits for its peer to receive."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from hangwatch import signatures as sg
from hangwatch.capture.locals import read_locals_once
from hangwatch.records.evidence import C10dWait, ProcessInfo, ProcessSample

C10D = sg.C10D_PY
WRAPPER = "torch/distributed/c10d_logger.py"  # _exception_logger's wrapper: the user's own args and kwargs
PEER_ARG = {"send": "dst", "recv": "src"}
# A rooted collective's root (a global rank): every rank of one call must name the same one
ROOT_ARG = {"broadcast": "src", "broadcast_object_list": "src", "scatter": "src", "reduce": "dst", "gather": "dst"}
# Where each call takes its group, positionally (torch 2.13's signatures): a call that passes none, neither by
# position nor by keyword, runs on the default group.
GROUP_AT = {
    "all_reduce": 2,
    "barrier": 0,
    "broadcast": 2,
    "all_gather": 2,
    "all_gather_into_tensor": 2,
    "reduce_scatter_tensor": 3,
    "reduce": 3,
    "gather": 3,
    "scatter": 3,
    "all_to_all_single": 4,
    "all_gather_object": 2,
    "broadcast_object_list": 2,
    "send": 2,
    "recv": 2,
}
GROUP_KEYWORDS = ("group", "group_dst", "group_src")
SETUP = "_new_process_group_helper"  # new_group's making of the group's backend: its members meet in the store
MAX_READS = 16  # ranks read in one capture (one py-spy each, in parallel, 3 s at most together)


def _c10d_calls(frames: list[Any], names: set[str] | dict[str, int]) -> list[int]:
    """The indexes of the frames of torch's c10d calls named in ``names``, in a stack innermost first (a frame of
    py-spy's JSON or of a sample)."""
    at = []
    for i, f in enumerate(frames):
        file, name = (
            (str(f.get("filename", "")), str(f.get("name", ""))) if isinstance(f, dict) else (f.file, f.function)
        )
        if file.endswith(C10D) and name in names:
            at.append(i)
    return at


def _outer_call(frames: list[Any]) -> int | None:
    """The index of the outermost frame of torch's c10d calls that ``GROUP_AT`` knows (the user's own call:
    ``all_gather_object`` rather than the ``all_gather`` it makes inside), in a stack innermost first."""
    at = _c10d_calls(frames, GROUP_AT)
    return at[-1] if at else None


def _setup_at(frames: list[Any]) -> int | None:
    """The index of torch's making of a process group's backend (``new_group``'s, where the members meet in the
    store under the group's name), in a stack innermost first."""
    at = _c10d_calls(frames, {SETUP})
    return at[0] if at else None


def _digest(text: str) -> str:
    """A short digest of ``text``, for what is only compared: a stack's key, a group's name (its 40 hex digits kept
    as they are would be redacted as a secret)."""
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _stack_of(frames: list[dict[str, Any]]) -> str:
    return stack_key([(str(f.get("name", "")), int(f.get("line") or 0)) for f in frames])


def _with_call_args(frames: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The c10d call's frame, its locals led by the wrapper's record of the user's arguments (``call_args``,
    ``call_kwargs``), when torch's logging wrapper sits right outside it; a group's making, its own locals (the
    group's name and members)."""
    i = _outer_call(frames)
    if i is None:
        i = _setup_at(frames)
        if i is None:
            return None
        stack = _stack_of(frames)
        # the name (torch hashes the members into 40 hex digits, which the redaction of secrets would hide): only
        # whether two ranks' names are the same matters, so a short digest of it is kept, never the name
        own = [
            {"name": "group_name", "repr": _digest(str(x.get("repr")))} if x.get("name") == "group_name" else x
            for x in frames[i].get("locals") or []
        ]
        return {**frames[i], "locals": [{"name": "stack", "repr": stack}, *own]}
    frame = dict(frames[i])
    outer = frames[i + 1] if i + 1 < len(frames) else {}
    call: list[dict[str, Any]] = [{"name": "stack", "repr": _stack_of(frames)}]
    if str(outer.get("filename", "")).endswith(WRAPPER):
        values = {str(v.get("name")): v.get("repr") for v in outer.get("locals") or []}
        call += [
            {"name": "call_args", "repr": values.get("args")},
            {"name": "call_kwargs", "repr": values.get("kwargs")},
        ]
    frame["locals"] = call + list(frame.get("locals") or [])
    return frame


def stack_key(frames: list[tuple[str, int]]) -> str:
    """A short key of a whole stack (function and line of every frame): the read is the window's own call only
    when its stack is the one the window's samples saw (a rank released meanwhile is in another call)."""
    return _digest(repr(frames))


def _main_stack(pid: int, sample: ProcessSample) -> str | None:
    t = next((t for t in sample.threads if t.tid == pid), None)
    return stack_key([(f.function, f.line) for f in t.frames]) if t is not None and t.frames else None


def in_c10d(pid: int, samples: list[ProcessSample] | tuple[ProcessSample, ...]) -> bool:
    """The main thread of ``pid`` sat idle in a c10d call, in the last two samples."""
    last = [next((t for t in s.threads if t.tid == pid), None) for s in samples[-2:]]
    return len(last) == 2 and all(
        t is not None
        and t.active is False
        and (_outer_call(list(t.frames)) is not None or _setup_at(list(t.frames)) is not None)
        for t in last
    )


def _top_level_items(text: str) -> int | None:
    """How many items a tuple's repr holds (``(<Tensor at 0x1>, 1)`` -> 2); None when cut short (py-spy writes
    ``(...)`` or ``(a, ...)`` for a long tuple, and ours cuts at 80 characters) or holds a string."""
    text = text.strip()
    if "..." in text or not text.startswith("(") or not text.endswith(")") or "'" in text or '"' in text:
        return None
    inner = text[1:-1].strip().rstrip(",")
    if not inner:
        return 0
    depth, count = 0, 1
    for c in inner:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            count += 1
    return count


def on_world(op: str, args: str | None, kwargs: str | None) -> bool | None:
    """Whether a call with these arguments (their reprs) runs on the default group: no group passed by keyword
    (or ``None``) nor by position; None when the arguments could not be read."""
    if args is None or kwargs is None or op not in GROUP_AT:
        return None
    if "..." in kwargs:  # cut short (py-spy writes {..., ...} for a long dict): a group may be among what is cut
        return None
    for key in GROUP_KEYWORDS:
        m = re.search(rf'"{key}":\s*([^,}}]+)', kwargs)
        if m is not None and m.group(1).strip() != "None":
            return False
    n = _top_level_items(args)
    if n is None:
        return None
    return n <= GROUP_AT[op]


def _may_nccl(pid: int) -> bool:
    """NCCL is loaded in ``pid`` (its maps name libnccl), or they cannot be read: its tags may be ignored."""
    try:
        with open(f"/proc/{pid}/maps", "rb") as f:
            return b"libnccl" in f.read()
    except OSError:
        return True


def read_c10d(
    series: dict[int, list[ProcessSample]], infos: dict[int, ProcessInfo], gone: set[int], py_spy: str | None
) -> tuple[dict[int, C10dWait], list[str]]:
    """pid -> the c10d call each rank is blocked in (its peer, its group), and notes on what could not be read."""
    wanted = [p for p, ss in series.items() if p not in gone and infos[p].rank is not None and in_c10d(p, ss)]
    if not py_spy or not wanted:
        return {}, []
    reads, notes = read_locals_once({p: {p} for p in sorted(wanted)[:MAX_READS]}, py_spy, _with_call_args)
    out: dict[int, C10dWait] = {}
    for pid, rs in reads.items():
        for r in rs:
            values = dict(r.values)
            if values.get("stack") != _main_stack(pid, series[pid][-1]):
                notes.append(f"pid {pid} left the collective call the look saw before its arguments were read")
                continue
            if r.function == SETUP:  # a group's making: its name and members, as this rank computed them
                members = [int(x) for x in re.findall(r"-?\d+", values.get("global_ranks_in_group") or "")]
                name = (values.get("group_name") or "").strip("'\"")
                out[pid] = C10dWait("new_group", group=name or None, members=tuple(members) or None)
                continue
            arg = PEER_ARG.get(r.function) or ROOT_ARG.get(r.function, "")
            raw, tag = values.get(arg, "None") or "None", values.get("tag") or "None"
            peer = int(raw) if raw.lstrip("-").isdigit() else None
            if r.function in PEER_ARG and _may_nccl(pid):
                tag = "None"  # NCCL pairs a send with a receive whatever their tags: a tag says nothing there
            out[pid] = C10dWait(
                r.function,
                peer,
                on_world(r.function, values.get("call_args"), values.get("call_kwargs")),
                int(tag) if r.function in PEER_ARG and tag.lstrip("-").isdigit() else None,
            )
    return out, notes

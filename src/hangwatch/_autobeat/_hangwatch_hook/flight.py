"""torch's flight recorder, read from outside: a server in each rank answers hangwatch's request with a dump.

Standard library only: it runs inside the job, whose interpreter need not have hangwatch installed.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from .slot import _Beats, _dist_rank

# Once the job has initialised its process group, each rank serves torch's own worker server on a unix socket
# in the heartbeat directory (mode 0600; nothing listens on a TCP port): its C++ handlers (fr_trace_json,
# dump_traceback, ping) answer even while Python is stuck, and ours (FR_HANDLER) adds each entry's Python
# frames when the GIL is free. A torch without the server gets a thread that writes the dump when hangwatch
# asks through a FIFO. A registry file per rank says where: flight-<pid>.json.
FR_HANDLER = "hangwatch_fr"
FR_ENV = "HANGWATCH_FLIGHT"  # "0": --no-flight-recorder (or autobeat off); "fifo": pretend there is no server
INDUCTOR = "torch._inductor"


def _fr_dump() -> bytes:
    """This process's flight recorder, every entry with its Python frames (torch's pickle form), as JSON. NCCL's
    process groups record into a recorder of their own (measured on an H200, torch 2.11: ``_dump_fr_trace`` had
    no entry of an NCCL job, ``_dump_nccl_trace`` all of them): both are read, and merged."""
    import pickle

    c10d: Any = sys.modules["torch._C._distributed_c10d"]
    dumps: list[dict[str, Any]] = []
    errors: list[Exception] = []
    for name in ("_dump_fr_trace", "_dump_nccl_trace"):  # each on its own: one failing leaves the other
        fn: Any = getattr(c10d, name, None)
        if fn is None:
            continue
        try:
            dumps.append(pickle.loads(_without_inductor(functools.partial(fn, True, True, False))))  # noqa: S301
        except Exception as e:  # noqa: BLE001 - the other recorder may still answer
            errors.append(e)
    if not dumps:
        raise errors[0] if errors else RuntimeError("torch has no flight recorder")
    data = dumps[0] if len(dumps) == 1 else merge_dumps(dumps[0], dumps[1])
    return json.dumps(data, default=str).encode()


def merge_dumps(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The generic recorder's dump and NCCL's as one: the entries of both, every key of either (NCCL's
    communicator state), each group's config and status; a group in both (``cpu:gloo,cuda:nccl``) keeps its
    two statuses, NCCL's as ``<pg> (nccl)`` (the entries tell the two apart by their ``nccl:`` prefix).
    capture/flight.py merges the C++ handlers' answers the same way (this hook cannot import hangwatch)."""
    out = {**b, **a, "entries": list(a.get("entries") or []) + list(b.get("entries") or [])}
    for key in ("pg_config", "pg_status"):
        merged = dict(a.get(key) or {})
        for k, v in (b.get(key) or {}).items():
            merged[f"{k} (nccl)" if k in merged and key == "pg_status" else k] = v
        out[key] = merged
    for key in ("version", "comm_lib_version"):
        out[key] = b.get(key) or a.get(key)
    return out


_DUMP_LOCKS: list[Any] = []  # one dump at a time (the server may answer two requests at once)
_CLOSING: list[bool] = []  # set once the process group goes away: no dump after that
_CALLS = [0, 0.0]  # our handlers running now, and when the last one began (monotonic)
_LEFT: list[Any] = []  # a server whose handler never returned: never shut down (that would join it forever)
_FIFO_READER: list[str] = []  # the FIFO this process's reader thread serves, once started


def _dump_lock() -> Any:
    if not _DUMP_LOCKS:
        import threading

        _DUMP_LOCKS.extend([threading.Lock(), threading.Lock()])
    return _DUMP_LOCKS[0]


def _calls_lock() -> Any:
    _dump_lock()
    return _DUMP_LOCKS[1]


def _without_inductor(dump: Callable[[], Any]) -> Any:
    """``dump()``, without importing torch._inductor. torch's symbolizer looks ``torch._inductor`` up on the
    torch module (for the source of generated kernels), and torch's lazy ``__getattr__`` imports it there: with
    dynamo and sympy, ~1 s and 28 MB read on the first dump of a job that never compiled, seconds on a busy
    machine. A job that never imported it has no generated code: for the dump, the name is taken out of
    torch's lazy modules (the lookup fails, and torch's symbolizer goes on without it); an ``import`` of it by
    a thread of the job meanwhile is not touched (the import system does not ask the lazy table)."""
    if _CLOSING:
        raise RuntimeError("the process group is being destroyed")
    torch = sys.modules.get("torch")
    lazy = getattr(torch, "_lazy_modules", None)
    lock = _dump_lock()
    if not lock.acquire(timeout=5.0):  # another dump is stuck: this one may import torch._inductor, but answers
        if _CLOSING:
            raise RuntimeError("the process group is being destroyed")
        return dump()
    try:
        if _CLOSING:  # checked under the lock: destroy_process_group waits for a dump already under way
            raise RuntimeError("the process group is being destroyed")
        if INDUCTOR in sys.modules or not isinstance(lazy, set) or "_inductor" not in lazy:
            return dump()
        lazy.discard("_inductor")
        try:
            return dump()
        finally:
            lazy.add("_inductor")
    finally:
        lock.release()


def _fr_handler(req: Any, resp: Any) -> None:
    if _CLOSING:  # at once: _stop_flight waits for this call to leave before it shuts the server down
        resp.set_content(b"the process group is being destroyed", "text/plain")
        resp.set_status(503)
        return
    with _calls_lock():
        _CALLS[0] += 1
        _CALLS[1] = time.monotonic()
    try:
        resp.set_content(_fr_dump(), "application/json")
        resp.set_status(200)
    except Exception as e:  # noqa: BLE001 - an answer that says why beats no answer
        resp.set_content(f"{type(e).__name__}: {e}".encode(), "text/plain")
        resp.set_status(500)
    finally:
        with _calls_lock():
            _CALLS[0] -= 1


def _fifo_thread(fifo: str, out: str) -> None:
    """The fallback when torch has no worker server: wait (no CPU) for hangwatch to write to ``fifo``, then
    write the dump to ``out`` (atomically), again and again."""
    import threading

    def loop() -> None:
        try:  # the OS thread's name, as /proc shows it: what it reads and writes is hangwatch's, not the job's
            import ctypes

            ctypes.CDLL(None).prctl(15, b"hangwatch-flight"[:15], 0, 0, 0)  # PR_SET_NAME
        except Exception:  # noqa: BLE001, S110 - a name is a nicety
            pass
        while True:
            try:
                with open(fifo, "rb") as f:  # blocks until hangwatch opens it for writing
                    f.read(64)
                tmp = f"{out}.tmp"
                with open(tmp, "wb") as f:
                    f.write(_fr_dump())
                os.replace(tmp, out)
            except Exception:  # noqa: BLE001 - a dump that fails is a rank that does not answer
                time.sleep(1.0)

    threading.Thread(target=loop, name="hangwatch-flight", daemon=True).start()


def _kept_past_exit(handler: Callable[..., Any]) -> None:
    """torch's handler registry is a C++ static: its destructor, at exit(), after the interpreter is gone, drops
    the handler. Were that the last reference, the function and its module's dict would be freed with no thread
    state ("Fatal Python error: PyThreadState_Get", SIGABRT, a healthy rank's exit -6): one reference is kept for
    good."""
    try:
        import ctypes

        ctypes.pythonapi.Py_IncRef(ctypes.py_object(handler))
    except Exception:  # noqa: BLE001, S110 - no ctypes: the server still starts (the exit's risk as before)
        pass


def _serve_flight(beats: _Beats) -> None:
    """After init_process_group: start this rank's reader of the flight recorder and say where it is."""
    how = os.environ.get(FR_ENV, "1")
    if how == "0":
        return
    c10d: Any = sys.modules.get("torch._C._distributed_c10d")
    server = getattr(c10d, "_WorkerServer", None) if how != "fifo" else None
    base = os.path.join(beats.directory, f"flight-{os.getpid()}")
    _dump_lock()  # made here, by one thread, before any request can come
    sock = _socket_path(beats.directory) if server is not None else None
    if sock is None:
        server = None  # no path short enough for a unix socket: the FIFO, whose path has no such limit
    if beats.flight is not None:  # a process group made again: the same reader, a new start for its entries
        entry = beats.flight_entry
    elif server is not None and sock is not None:
        import pickle  # noqa: F401 - now, not at the first request: the handler's answer has 2 s on a busy machine

        path = sock
        if os.path.exists(path):
            os.unlink(path)
        register = getattr(c10d, "_register_handler", None)
        if register is not None and FR_HANDLER not in c10d._get_handler_names():
            register(FR_HANDLER, _fr_handler)
            _kept_past_exit(_fr_handler)
        beats.flight = server(path, -1)  # kept: the server lives as long as this object
        os.chmod(path, 0o600)
        import atexit

        # Stopped while the interpreter and torch are whole: left to the interpreter's teardown, the server's
        # thread was seen to abort the process ("FATAL: exception not rethrown", exit -6) on a busy machine.
        atexit.register(_stop_flight, beats)
        entry = {"kind": "server", "socket": path}
    else:
        fifo = base + ".fifo"
        if not _FIFO_READER:  # one reader a process: after a destroy and a new group, the same one reads on
            if os.path.exists(fifo):
                os.unlink(fifo)
            os.mkfifo(fifo, 0o600)
            _fifo_thread(fifo, base + ".dump.json")
            _FIFO_READER.append(fifo)
        beats.flight = fifo
        entry = {"kind": "fifo", "fifo": fifo, "dump": base + ".dump.json"}
    beats.flight_entry = entry
    entry.update({"pid": os.getpid(), "rank": _dist_rank(), "at": time.time()})
    tmp = base + ".json.tmp"
    with open(tmp, "w") as f:
        json.dump(entry, f)
    os.replace(tmp, base + ".json")


SUN_PATH_MAX = 107  # bytes of a unix socket's path (sun_path is 108 with its NUL); a longer one is cut short


def _letters(n: int) -> str:
    """A number as letters (``10896`` -> ``baijg``)."""
    return "".join(chr(97 + int(d)) for d in str(n))


def _socket_path(directory: str) -> str | None:
    """Where this rank's worker server listens: the heartbeat directory, or, where that path is too long for a
    unix socket (a deep run directory; the server would bind a name cut short and nobody could reach it), a
    directory of this user's own (mode 0700) under the system's temporary directory; None when neither fits.
    The name has no digits: torch prints it once per rank, and a number that grows from one rank's line to the
    next would read as a progress counter."""
    import tempfile

    name = f"flight-{_letters(os.getpid())}.sock"
    here = os.path.join(directory, name)
    if len(os.fsencode(here)) <= SUN_PATH_MAX:
        return here
    private = os.path.join(tempfile.gettempdir(), f"hangwatch-{_letters(os.getuid())}")
    try:
        os.makedirs(private, mode=0o700, exist_ok=True)
        st = os.lstat(private)
    except OSError:
        return None
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None  # not a directory of this user's alone: a socket there could be reached by others
    there = os.path.join(private, name)
    return there if len(os.fsencode(there)) <= SUN_PATH_MAX else None


def _reader_reset() -> None:
    """After fork: the child has no reader of its own yet, and the parent's locks may have been held. A server left
    running is kept for good (its destructor would shut the parent's own socket: slot._keep_inherited)."""
    for server in _LEFT:
        _kept_past_exit(server)
    for state in (_DUMP_LOCKS, _CLOSING, _LEFT, _FIFO_READER):
        state.clear()
    _CALLS[:] = [0, 0.0]


def _stop_flight(beats: _Beats) -> None:
    """Shut this rank's reader down before its process group or the interpreter goes.

    torch's ``_WorkerServer.shutdown`` joins the server's threads while holding the GIL, and our handler needs
    the GIL: shut down while a request of hangwatch's is being answered, the job never exits (seen: a rank
    stuck in ``std::thread::join``). So nothing may be asked any more (the registry says ``closed`` and the socket
    is removed first, and a handler that starts answers at once), a request already connected gets the GIL to
    finish (waited for, the GIL free: none running and none begun for 0.1 s since the socket went, at most 10 s),
    and only then the server is shut down; one whose handler never returns is left as it is."""
    if not _CLOSING:
        _CLOSING.append(True)
    server, beats.flight = beats.flight, None
    if server is None:
        return
    base = os.path.join(beats.directory, f"flight-{os.getpid()}")
    try:  # kept, closed: what the rank served stays on record
        with open(base + ".json.tmp", "w") as f:
            json.dump({**beats.flight_entry, "kind": "closed", "was": beats.flight_entry.get("kind")}, f)
        os.replace(base + ".json.tmp", base + ".json")
    except OSError:
        pass
    sock = beats.flight_entry.get("socket")
    if isinstance(sock, str):
        try:
            os.unlink(sock)
        except OSError:
            pass
    closed = time.monotonic()
    deadline = closed + 10.0
    while time.monotonic() < deadline and (_CALLS[0] or time.monotonic() - max(_CALLS[1], closed) < 0.1):
        time.sleep(0.01)  # the GIL free: a request connected before the socket went reaches the handler and leaves
    if _CALLS[0]:  # a dump that does not end: shut down now and the rank never exits; left to the OS instead
        _LEFT.append(server)
        return
    if hasattr(server, "shutdown"):
        try:
            server.shutdown()
        except Exception:  # noqa: BLE001, S110 - the job is exiting; nothing more to do
            pass


def _attach_distributed(beats: _Beats, dist: Any) -> None:
    """Wrap init_process_group (torch.distributed's and distributed_c10d's: the same function) so that the
    flight recorder's reader starts once a process group exists."""
    original = getattr(dist, "init_process_group", None)
    if original is None or getattr(original, "_hangwatch", False) or os.environ.get(FR_ENV, "1") == "0":
        return

    @functools.wraps(original)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        _CLOSING.clear()  # a process group made again (after a destroy): its recorder may be read
        try:
            _serve_flight(beats)
        except Exception:  # noqa: BLE001, S110 - the recorder is evidence, never a reason to break the job
            pass
        return result

    init_process_group._hangwatch = True  # type: ignore[attr-defined]
    dist.init_process_group = init_process_group
    c10d = getattr(dist, "distributed_c10d", None)
    if c10d is not None and getattr(c10d, "init_process_group", None) is original:
        c10d.init_process_group = init_process_group
    destroy = getattr(dist, "destroy_process_group", None)
    if destroy is None or getattr(destroy, "_hangwatch", False):
        return

    @functools.wraps(destroy)
    def destroy_process_group(group: Any = None, *args: Any, **kwargs: Any) -> Any:
        world = getattr(getattr(dist, "GroupMember", None), "WORLD", None)
        every = group is None or (world is not None and group is world)  # torch destroys every group for both
        if every:  # the recorder's entries go with them: the reader goes first
            try:
                _stop_flight(beats)
            except Exception:  # noqa: BLE001, S110 - never a reason to break the job
                pass
        try:
            return destroy(group, *args, **kwargs)
        except BaseException:  # the reader kept while the groups stay; re-raised
            if every:  # the groups are still there: so is the reader
                _CLOSING.clear()
                try:
                    _serve_flight(beats)
                except Exception:  # noqa: BLE001, S110 - the reader back is a nicety; torch's error goes on
                    pass
            raise

    destroy_process_group._hangwatch = True  # type: ignore[attr-defined]
    dist.destroy_process_group = destroy_process_group
    if c10d is not None and getattr(c10d, "destroy_process_group", None) is destroy:
        c10d.destroy_process_group = destroy_process_group

"""The rule vocabulary: which frames mean what. One place, named, with where it comes from.

Match on file suffixes and function names, never on line numbers (they move between torch
versions). Signatures verified on torch 2.13.0 / CPython 3.11 unless noted
(shared/research/stack-capture.md §6, hang-causes.md §2).
"""

from __future__ import annotations

import re
from typing import Protocol

from hangwatch.evidence import Frame


class FrameLike(Protocol):
    """Anything with a function and a file: evidence frames and incident frame records alike."""

    @property
    def function(self) -> str: ...

    @property
    def file(self) -> str: ...

# --- what is "user code" -------------------------------------------------------------------------
# Library: the standard library, anything installed (site-/dist-packages), frozen modules, and
# console-script shims in an environment's bin/ (e.g. ``venv/bin/torchrun``).
_STDLIB_DIR = re.compile(r"/lib(64)?/python\d+(\.\d+)?t?/")
_INSTALLED = ("/site-packages/", "/dist-packages/")


# Code that torch.compile generates at run time: inductor's cache (default /tmp/torchinductor_<user>,
# or TORCHINDUCTOR_CACHE_DIR) holds files named by a hash, e.g. .../se/csemwqts2kr...mow.py.
_GENERATED = ("/torchinductor_", "/torch_compile_cache/", "/triton/cache/", "/.triton/")
_GENERATED_NAME = re.compile(r"/[a-z0-9]{2}/c[a-z0-9]{40,}\.py$")


def is_library_file(path: str) -> bool:
    if not path or path.startswith("<"):
        return True
    if any(m in path for m in _INSTALLED) or any(m in path for m in _GENERATED) or _GENERATED_NAME.search(path):
        return True
    if _STDLIB_DIR.search(path):
        return True
    parts = path.rsplit("/", 2)
    return len(parts) == 3 and parts[1] == "bin" and not parts[2].endswith(".py")


def is_stdlib_file(path: str) -> bool:
    return (path.startswith("<") or bool(_STDLIB_DIR.search(path))) and not any(m in path for m in _INSTALLED)


def is_user(frame: Frame) -> bool:
    return not is_library_file(frame.file)


def method(frame: Frame | FrameLike) -> str:
    """py-spy names methods ``Class.method`` (and closures ``f.<locals>.g``); the last part."""
    return frame.function.rsplit(".", 1)[-1]


def at(frame: Frame | FrameLike, file_suffix: str, functions: frozenset[str] | None = None) -> bool:
    suffix = file_suffix if file_suffix.startswith("/") else "/" + file_suffix
    if not frame.file.endswith(suffix):
        return False
    return functions is None or method(frame) in functions


# --- DataLoader (torch/utils/data) ---------------------------------------------------------------
DATALOADER_PY = "torch/utils/data/dataloader.py"
WORKER_PY = "torch/utils/data/_utils/worker.py"
FETCH_PY = "torch/utils/data/_utils/fetch.py"
COLLATE_PY = "torch/utils/data/_utils/collate.py"
# Main process waiting for a batch: _next_data -> _get_data -> _try_get_data -> Queue.get.
# _reset waits for the _ResumeIteration acks of persistent workers at an epoch start.
LOADER_WAIT_METHODS = frozenset({"_try_get_data", "_get_data", "_next_data", "_reset"})
WORKER_LOOP = frozenset({"_worker_loop"})
# Worker is busy: inside the fetcher (dataset/collate) or any frame above _worker_loop not in the
# standard library (worker_init_fn is called directly by _worker_loop).
FETCH_METHODS = frozenset({"fetch"})

# --- distributed (torch/distributed) -------------------------------------------------------------
C10D_PY = "torch/distributed/distributed_c10d.py"
COLLECTIVES = frozenset({
    "all_reduce", "all_reduce_coalesced", "barrier", "monitored_barrier", "broadcast", "all_gather",
    "all_gather_into_tensor", "_all_gather_base", "reduce_scatter", "reduce_scatter_tensor",
    "_reduce_scatter_base", "reduce", "gather", "scatter", "all_to_all", "all_to_all_single", "send",
    "recv", "isend", "irecv", "batch_isend_irecv", "all_gather_object", "broadcast_object_list",
    "gather_object", "scatter_object_list", "send_object_list", "recv_object_list", "wait",
})
RENDEZVOUS_METHODS = frozenset({
    "_create_c10d_store", "_env_rendezvous_handler", "_tcp_rendezvous_handler", "rendezvous",
    "_store_based_barrier", "init_process_group", "next_rendezvous", "_rendezvous",
    "_initialize_workers", "sync", "_get_store", "get_store",
})
RENDEZVOUS_FILES = ("torch/distributed/rendezvous.py", "torch/distributed/elastic/rendezvous/",
                    C10D_PY)
DDP_PY = "torch/nn/parallel/distributed.py"

# --- torch.compile ---------------------------------------------------------------------------------
COMPILE_DIRS = ("/torch/_dynamo/", "/torch/_inductor/", "/torch/_functorch/", "/triton/")

# --- network -----------------------------------------------------------------------------------------
NETWORK_STDLIB = (
    ("socket.py", frozenset({"recv", "recv_into", "recvfrom", "connect", "create_connection", "accept",
                             "sendall", "send", "getaddrinfo", "readinto"})),
    ("ssl.py", frozenset({"read", "recv", "recv_into", "do_handshake", "connect", "sendall"})),
    ("http/client.py", None),
    ("urllib/request.py", None),
    ("ftplib.py", None),
    ("smtplib.py", None),
)
NETWORK_PACKAGES = ("/urllib3/", "/requests/", "/httpx/", "/httpcore/", "/aiohttp/", "/huggingface_hub/",
                    "/botocore/", "/boto3/", "/s3fs/", "/gcsfs/", "/fsspec/implementations/http",
                    "/grpc/", "/websocket", "/wandb/sdk/lib/sock_client", "/datasets/utils/file_utils",
                    "/datasets/iterable_dataset")
# Kernel wait channels of a thread blocked on a TCP/UDP socket (not the unix sockets that
# multiprocessing uses: those wait in unix_stream_* and are excluded on purpose).
NETWORK_WCHANS = ("sk_wait_data", "inet_csk_accept", "tcp_", "inet_wait_for_connect", "udp_",
                  "__skb_wait_for_more_packets")

NETWORK_FD_PREFIXES = ("tcp ", "udp ")  # capture's description of a blocked call's socket

# --- waiting on a child process ------------------------------------------------------------------------
CHILD_WAIT = (
    ("subprocess.py", frozenset({"wait", "_wait", "communicate", "_communicate", "_try_wait", "run", "call",
                                 "check_call", "check_output"})),
    ("multiprocessing/popen_fork.py", frozenset({"wait", "poll"})),
    ("multiprocessing/process.py", frozenset({"join"})),
    ("multiprocessing/pool.py", frozenset({"join", "get", "wait"})),
    ("concurrent/futures/process.py", None),
)
CHILD_WAIT_WCHAN = "do_wait"
PIPE_WCHANS = ("pipe_read", "pipe_wait")  # anon_pipe_read on 6.x kernels

# --- waiting on a thread-level primitive (deadlock candidates) ---------------------------------------
THREAD_SYNC = (
    ("threading.py", frozenset({"wait", "acquire", "join", "_wait_for_tstate_lock", "__enter__"})),
    ("queue.py", frozenset({"get", "put", "join"})),
    ("concurrent/futures/_base.py", frozenset({"result", "wait", "exception"})),
    ("asyncio/base_events.py", frozenset({"run_until_complete"})),
)
# A source line that takes a lock: ``with lock:``, ``with self._lock:``, ``lock.acquire()``.
LOCK_LINE = re.compile(r"^\s*(with\s+[\w.\[\]()]*(lock|mutex|mtx|sem|cond)\w*[\w.\[\]()]*\s*(,|:|as)|"
                       r".*\b[\w.]*(lock|mutex|mtx|sem)\w*\.acquire\()", re.IGNORECASE)
SLEEP_LINE = re.compile(r"\b(time\.)?sleep\(")
# Threads that every DataLoader / multiprocessing process has; they are not "user threads" that
# could hold a user lock at fork time.
INTERNAL_THREAD_NAMES = ("QueueFeederThread", "_serve", "_pin_memory_loop", "pt_data_worker", "pt_elastic",
                         "RendezvousKeepAliveTimer", "_handle_workers", "_handle_tasks", "_handle_results")
# Fork frames: a stack that starts with the parent's copy up to Popen._launch is a forked child.
FORK_LAUNCH = ("multiprocessing/popen_fork.py", frozenset({"_launch"}))


def matches_any(frame: Frame, table: tuple[tuple[str, frozenset[str] | None], ...]) -> bool:
    return any(at(frame, suffix, names) for suffix, names in table)


def is_lock_line(code: str | None) -> bool:
    return bool(code and LOCK_LINE.match(code))


def is_network_frame(frame: Frame) -> bool:
    return matches_any(frame, NETWORK_STDLIB) or any(p in frame.file for p in NETWORK_PACKAGES)


def is_compile_frame(frame: Frame) -> bool:
    return any(d in frame.file for d in COMPILE_DIRS)

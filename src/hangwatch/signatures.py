"""The rule vocabulary: which frames mean what. One place, named, with where it comes from.

Match on file suffixes and function names, never on line numbers (they move between torch
versions). Signatures verified on torch 2.13.0 / CPython 3.11 unless noted
(docs/facts.md#stacks-of-a-waiting-job).
"""

from __future__ import annotations

import ast
import re
import signal
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from hangwatch.records.evidence import Frame


class FrameLike(Protocol):
    """Anything with a function and a file: evidence frames and incident frame records alike."""

    @property
    def function(self) -> str:
        """The function's name."""
        ...

    @property
    def file(self) -> str:
        """The file's path."""
        ...


# --- what is "user code" -------------------------------------------------------------------------
# Library: the standard library, anything installed (site-/dist-packages), frozen modules, and
# console-script shims in an environment's bin/ (e.g. ``venv/bin/torchrun``).
_STDLIB_DIR = re.compile(r"/lib(64)?/python\d+(\.\d+)?t?/")
_INSTALLED = ("/site-packages/", "/dist-packages/")


# Code that torch.compile generates at run time: inductor's cache (default /tmp/torchinductor_<user>,
# or TORCHINDUCTOR_CACHE_DIR) holds files named by a hash, e.g. .../se/csemwqts2kr...mow.py.
_GENERATED = ("/torchinductor_", "/torch_compile_cache/", "/triton/cache/", "/.triton/")
_GENERATED_NAME = re.compile(r"/[a-z0-9]{2}/c[a-z0-9]{40,}\.py$")
# hangwatch's own startup hook wraps DataLoader iteration and torch.save: its frames are not the user's.
_AUTOBEAT_HOOK = ("/_autobeat/sitecustomize.py", "/_autobeat/_hangwatch_hook/")


# multiprocess, the dill fork of multiprocessing (HF datasets' map(num_proc=N), pathos), keeps its files and names:
# a frame in multiprocess/pool.py is one in multiprocessing/pool.py to every table here. Installed only (site- or
# dist-packages): a user's own folder of that name is the user's.
_MULTIPROCESS = ("/site-packages/multiprocess/", "/dist-packages/multiprocess/")


def is_library_file(path: str) -> bool:
    """Standard library, installed packages, generated code, or an environment's bin/ shim."""
    if not path or path.startswith("<"):
        return True
    if (
        any(m in path for m in _INSTALLED)
        or any(m in path for m in _GENERATED)
        or _GENERATED_NAME.search(path)
        or path.endswith(_AUTOBEAT_HOOK[0])
        or _AUTOBEAT_HOOK[1] in path
    ):
        return True
    if _STDLIB_DIR.search(path):
        return True
    parts = path.rsplit("/", 2)
    return len(parts) == 3 and parts[1] == "bin" and not parts[2].endswith(".py")


def is_stdlib_file(path: str) -> bool:
    """The standard library (not site-packages; multiprocess, its copy of multiprocessing, counts as it)."""
    if "multiprocess/" in path and any(m in path for m in _MULTIPROCESS):
        return True
    return (path.startswith("<") or bool(_STDLIB_DIR.search(path))) and not any(m in path for m in _INSTALLED)


def is_user(frame: Frame) -> bool:
    """Whether a frame is the user's own code."""
    return not is_library_file(frame.file)


def method(frame: Frame | FrameLike) -> str:
    """py-spy names methods ``Class.method`` (and closures ``f.<locals>.g``); the last part."""
    return frame.function.rsplit(".", 1)[-1]


def stdlib_path(path: str) -> str:
    """``path``, with multiprocess's package folder read as multiprocessing's."""
    if "multiprocess/" not in path:  # (the common case, on every frame of every table's match: one search)
        return path
    for m in _MULTIPROCESS:
        i = path.rfind(m)
        if i >= 0:
            return f"{path[:i]}{m[:-1]}ing/{path[i + len(m) :]}"
    return path


def at(frame: Frame | FrameLike, file_suffix: str, functions: frozenset[str] | None = None) -> bool:
    """Whether ``frame`` is in a file ending with ``file_suffix`` (and one of ``functions``)."""
    suffix = file_suffix if file_suffix.startswith("/") else "/" + file_suffix
    if not stdlib_path(frame.file).endswith(suffix):
        return False
    return functions is None or method(frame) in functions


EXIT_JOIN = frozenset({"_shutdown"})  # threading._shutdown: the interpreter's exit joining the non-daemon threads


# --- DataLoader (torch/utils/data) ---------------------------------------------------------------
DATALOADER_PY = "torch/utils/data/dataloader.py"
WORKER_PY = "torch/utils/data/_utils/worker.py"
FETCH_PY = "torch/utils/data/_utils/fetch.py"
COLLATE_PY = "torch/utils/data/_utils/collate.py"
# Main process waiting for a batch: _next_data -> _get_data -> _try_get_data -> Queue.get.
# _reset waits for the _ResumeIteration acks of persistent workers at an epoch start.
LOADER_WAIT_METHODS = frozenset({"_try_get_data", "_get_data", "_next_data", "_reset"})
# DataLoader(timeout=N): _get_data's one bounded get, which raises "DataLoader timed out after N seconds" (torch 2.13,
# dataloader.py:1445); without it, _get_data polls again every 5 s for ever
LOADER_TIMEOUT_CALL = "_try_get_data(self._timeout)"
WORKER_LOOP = frozenset({"_worker_loop"})

# --- distributed (torch/distributed) -------------------------------------------------------------
C10D_PY = "torch/distributed/distributed_c10d.py"
COLLECTIVES = frozenset(
    {
        "all_reduce",
        "all_reduce_coalesced",
        "barrier",
        "monitored_barrier",
        "broadcast",
        "all_gather",
        "all_gather_into_tensor",
        "_all_gather_base",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "_reduce_scatter_base",
        "reduce",
        "gather",
        "scatter",
        "all_to_all",
        "all_to_all_single",
        "send",
        "recv",
        "isend",
        "irecv",
        "batch_isend_irecv",
        "all_gather_object",
        "broadcast_object_list",
        "gather_object",
        "scatter_object_list",
        "send_object_list",
        "recv_object_list",
        "wait",
    }
)
RENDEZVOUS_METHODS = frozenset(
    {
        "_create_c10d_store",
        "_env_rendezvous_handler",
        "_tcp_rendezvous_handler",
        "rendezvous",
        "_store_based_barrier",
        "init_process_group",
        "next_rendezvous",
        "_rendezvous",
        "_initialize_workers",
        "sync",
        "_get_store",
        "get_store",
    }
)
RENDEZVOUS_FILES = ("torch/distributed/rendezvous.py", "torch/distributed/elastic/rendezvous/", C10D_PY)

# --- torch.compile ---------------------------------------------------------------------------------
COMPILE_DIRS = ("/torch/_dynamo/", "/torch/_inductor/", "/torch/_functorch/", "/triton/")

# --- network -----------------------------------------------------------------------------------------
NETWORK_STDLIB = (
    (
        "socket.py",
        frozenset(
            {
                "recv",
                "recv_into",
                "recvfrom",
                "connect",
                "create_connection",
                "accept",
                "sendall",
                "send",
                "getaddrinfo",
                "readinto",
            }
        ),
    ),
    ("ssl.py", frozenset({"read", "recv", "recv_into", "do_handshake", "connect", "sendall"})),
    ("http/client.py", None),
    ("urllib/request.py", None),
    ("ftplib.py", None),
    ("smtplib.py", None),
)
NETWORK_PACKAGES = (
    "/urllib3/",
    "/requests/",
    "/httpx/",
    "/httpcore/",
    "/aiohttp/",
    "/huggingface_hub/",
    "/botocore/",
    "/boto3/",
    "/s3fs/",
    "/gcsfs/",
    "/fsspec/implementations/http",
    "/grpc/",
    "/websocket",
    "/wandb/sdk/lib/sock_client",
    "/datasets/utils/file_utils",
    "/datasets/iterable_dataset",
)
# Kernel wait channels of a thread blocked on a TCP/UDP socket (not the unix sockets that
# multiprocessing uses: those wait in unix_stream_* and are excluded on purpose).
NETWORK_WCHANS = (
    "sk_wait_data",
    "inet_csk_accept",
    "tcp_",
    "inet_wait_for_connect",
    "udp_",
    "__skb_wait_for_more_packets",
)

NETWORK_FD_PREFIXES = ("tcp ", "udp ")  # capture's description of a blocked call's socket
NETWORK_FILESYSTEMS = ("nfs", "cifs", "smb", "fuse", "lustre", "gpfs", "beegfs", "ceph", "gluster", "9p")

# --- waiting on a child process ------------------------------------------------------------------------
CHILD_WAIT = (
    (
        "subprocess.py",
        frozenset(
            {"wait", "_wait", "communicate", "_communicate", "_try_wait", "run", "call", "check_call", "check_output"}
        ),
    ),
    ("multiprocessing/popen_fork.py", frozenset({"wait", "poll"})),
    ("multiprocessing/process.py", frozenset({"join"})),
    ("multiprocessing/pool.py", frozenset({"join", "get", "wait"})),
    ("concurrent/futures/process.py", None),
)
# A process idle in its own wait for work: a multiprocessing.Pool worker waiting for its next task, a
# concurrent.futures worker waiting on its call queue (CPython 3.10-3.13: multiprocessing/pool.py worker,
# concurrent/futures/process.py _process_worker), the task read going through queues.py / connection.py.
WAIT_FOR_WORK = (
    ("multiprocessing/pool.py", frozenset({"worker"})),
    ("concurrent/futures/process.py", frozenset({"_process_worker"})),
)


def waits_for_work(frames: Sequence[Frame]) -> bool:
    """A worker's stack idle in its own wait for the next task (a multiprocessing.Pool or concurrent.futures worker
    reading its task queue, a DataLoader worker waiting for an index): below its worker loop only the library's frames,
    none of a task's (a task of the user's that reads its own pipe is no wait for work)."""
    loop = next(
        (i for i, f in enumerate(frames) if matches_any(f, WAIT_FOR_WORK) or at(f, WORKER_PY, WORKER_LOOP)), None
    )
    if loop is None:
        return False
    return all(is_stdlib_file(f.file) or at(f, WORKER_PY) or "/torch/" in f.file for f in frames[:loop]) and not any(
        at(f, FETCH_PY) or at(f, COLLATE_PY) for f in frames[:loop]
    )


WORK_READ = (
    ("multiprocessing/queues.py", frozenset({"get", "_recv_bytes"})),
    (
        "multiprocessing/connection.py",
        frozenset({"recv", "recv_bytes", "_recv_bytes", "_recv", "poll", "_poll", "wait"}),
    ),
    ("multiprocessing/synchronize.py", frozenset({"__enter__", "acquire"})),  # the queue's read lock
    ("threading.py", frozenset({"wait", "acquire"})),
)
# The main side of a pool: waiting for results (Pool.map/starmap/apply, AsyncResult.get).
POOL_RESULT_WAIT = (
    ("multiprocessing/pool.py", frozenset({"map", "starmap", "get", "wait", "apply", "imap", "next", "__next__"})),
)
SLEEP_SYSCALLS = frozenset({"nanosleep", "clock_nanosleep"})
# Waits whose timer the kernel shows and that end by it: the sleeps, and sigtimedwait (a signal may end it sooner)
TIMER_SYSCALLS = SLEEP_SYSCALLS | {"sigwait"}
CHILD_WAIT_WCHAN = "do_wait"
PIPE_WCHANS = ("pipe_read", "pipe_wait")  # anon_pipe_read on 6.x kernels

# --- waiting on a thread-level primitive (deadlock candidates) ---------------------------------------
THREAD_SYNC = (
    ("threading.py", frozenset({"wait", "acquire", "join", "_wait_for_tstate_lock", "__enter__"})),
    ("queue.py", frozenset({"get", "put", "join"})),
    ("concurrent/futures/_base.py", frozenset({"result", "wait", "exception"})),
    ("asyncio/base_events.py", frozenset({"run_until_complete"})),
)
# A source line that takes a lock: ``with lock:``, ``with self._lock:``, ``lock.acquire()``. The patterns are linear
# in the line (a generated source line can be long): a name is a whole run of its characters, matched once from the
# run's start, then searched for a lock-like word.
WITH_NAME = re.compile(r"^\s*with\s+([\w.\[\]()]+)\s*(?:,|:|as)")  # anchored: linear
# A multiprocessing.Queue's feeder thread that could not send an item (it failed to pickle) prints this frame in its
# traceback and drops the item: the queue's reader waits for it for ever.
FEED_TRACEBACK = re.compile(r"queues\.py\", line \d+, in _feed")


def feeder_failed(tail: str) -> str | None:
    """The pickling error the job's output says a queue's feeder thread failed with (its traceback's last line), or
    None: none, or one of another kind (a BrokenPipeError: the reader went away, a consequence)."""
    found = list(FEED_TRACEBACK.finditer(tail))
    if not found:
        return None
    err = next((ln.strip()[:200] for ln in tail[found[-1].end() :].splitlines() if ln and not ln.startswith(" ")), "")
    return err if "pickl" in err.lower() or "Can't get local object" in err else None


ACQUIRE_CALL = re.compile(r"(?<![\w.\[\]])([\w.\[\]]+)\.acquire\(")
_LOCK_WORD = re.compile(r"lock|mutex|mtx|sem", re.IGNORECASE)
_WITH_LOCK_WORD = re.compile(r"lock|mutex|mtx|sem|cond", re.IGNORECASE)
SLEEP_LINE = re.compile(r"\b(time\.)?sleep\(")
LONG_TIMER_S = 86400.0  # a sleep this long (a day) ends after every bound hangwatch keeps: it is a hang
DEFAULT_TIMER_BOUND_S = 1800.0  # the default --max-slow: the bound of a timer where the job's own is not known


def sleep_timer(code: str | None) -> float | None:
    """The seconds of a ``sleep(N)`` on a source line, when N is a number written there (``10**9``,
    ``3600 * 24``); None for anything else (a variable, a call)."""
    if not code or not SLEEP_LINE.search(code):
        return None
    try:
        tree = ast.parse(code.strip().split("#", 1)[0].strip().rstrip(":") or "0")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and len(node.args) == 1
            and not node.keywords
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "sleep")
                or (isinstance(node.func, ast.Name) and node.func.id == "sleep")
            )
        ):
            return _number(node.args[0])
    return None


def _number(node: ast.expr) -> float | None:
    """A numeric constant expression's value (+ - * / ** of numbers), bounded; None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _number(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp):
        a, b = _number(node.left), _number(node.right)
        if a is None or b is None:
            return None
        try:
            if isinstance(node.op, ast.Pow):
                return float(a**b) if abs(b) <= 64 and abs(a) <= 1e6 else None
            ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
            if isinstance(node.op, ast.Div):
                return a / b if b else None
            return ops.get(type(node.op))
        except (OverflowError, ZeroDivisionError):
            return None
    return None


# Library machinery threads (DataLoader, multiprocessing, torch's elastic agent and debug server, our own
# flight-recorder reader): they are not "user threads" that could hold a user lock at fork time, or set a
# flag a user's loop reads.
INTERNAL_THREAD_FILES = ("tqdm/_monitor.py",)  # a library thread's own loop, known by its file
INTERNAL_THREAD_NAMES = (
    "QueueFeederThread",
    "_serve",
    "_pin_memory_loop",
    "pt_data_worker",
    "pt_elastic",
    "RendezvousKeepAliveTimer",
    "_handle_workers",
    "_handle_tasks",
    "_handle_results",
    "hangwatch-flight",
    "pt_workerserver",  # torch's debug server: runs torch's own handlers (a flight-recorder dump we asked for)
)
# Fork frames: a stack that starts with the parent's copy up to Popen._launch is a forked child.
FORK_LAUNCH = ("multiprocessing/popen_fork.py", frozenset({"_launch"}))

F = TypeVar("F", bound=FrameLike)


def own_frames(frames: Sequence[F]) -> Sequence[F]:
    """The frames a process ran itself: a forked child's stack continues below ``Popen._launch``
    with a copy of its parent's frames, which say nothing about the child."""
    for i, f in enumerate(frames):
        if at(f, *FORK_LAUNCH):
            return frames[:i]
    return frames


def matches_any(frame: Frame, table: tuple[tuple[str, frozenset[str] | None], ...]) -> bool:
    """Whether ``frame`` matches any (file suffix, functions) of ``table``."""
    return any(at(frame, suffix, names) for suffix, names in table)


def is_lock_line(code: str | None) -> bool:
    """Whether a source line takes a lock."""
    if not code:
        return False
    m = WITH_NAME.match(code)
    if m and _WITH_LOCK_WORD.search(m.group(1)):
        return True
    # ``x.lock.acquire(``: the lock-like word in the receiver's last name (``locks[0].acquire(`` is not read)
    return any(
        _LOCK_WORD.search(last) and not last.endswith("]")
        for last in (c.group(1).rsplit(".", 1)[-1] for c in ACQUIRE_CALL.finditer(code))
    )


def lock_name(code: str | None) -> str | None:
    """The lock a source line takes, by its last name (``with self.cache_lock:`` -> ``cache_lock``)."""
    if not code or not is_lock_line(code):
        return None
    m = WITH_NAME.match(code) or ACQUIRE_CALL.search(code)
    return m.group(1).rstrip("()").rsplit(".", 1)[-1] if m else None


def is_rendezvous_frame(frame: Frame) -> bool:
    """Whether a frame is torch's rendezvous / process-group setup."""
    return any(m in frame.file for m in RENDEZVOUS_FILES) and method(frame) in RENDEZVOUS_METHODS


def is_network_frame(frame: Frame) -> bool:
    """Whether a frame is in socket, HTTP or hub client code."""
    return matches_any(frame, NETWORK_STDLIB) or any(p in frame.file for p in NETWORK_PACKAGES)


def is_compile_frame(frame: Frame) -> bool:
    """Whether a frame is in torch.compile's machinery."""
    return any(d in frame.file for d in COMPILE_DIRS)


# torch's DataLoader ends its workers: each joined for up to MP_STATUS_CHECK_INTERVAL (5 s), then terminated and
# joined again as long (torch/utils/data/dataloader.py _shutdown_workers; _clean_up_worker before torch 2.12).
DATALOADER_SHUTDOWN = frozenset({"_shutdown_workers", "_clean_up_worker", "_clean_up_persistent_workers_atexit"})
WORKER_JOIN_S = 5.0
# Frames that read from a person: getpass, pdb and cmd loops, code.interact (the stdlib files).
INPUT_FRAMES = (
    ("getpass.py", frozenset({"unix_getpass", "_raw_input", "win_getpass", "getpass"})),
    ("pdb.py", frozenset({"interaction", "cmdloop", "_cmdloop"})),
    ("cmd.py", frozenset({"cmdloop"})),
    ("code.py", frozenset({"interact", "raw_input"})),
)
# A line that asks a person (a plain `sys.stdin.readline()` may be reading data from a pipe).
INPUT_CALL = re.compile(r"\b(input|raw_input|getpass|prompt)\s*\(")
READ_SYSCALLS = frozenset({"read", "readv", "pread64", "recvfrom", "recvmsg"})
WRITE_SYSCALLS = frozenset({"write", "writev", "pwrite64", "sendto", "sendmsg"})  # a write a full pipe or socket blocks
TTY_PREFIXES = ("/dev/pts/", "/dev/tty", "/dev/console")  # what a terminal is behind a file descriptor
TIMERFD = "anon_inode:[timerfd]"  # a timer's file descriptor in /proc/PID/fd (timerfd_create): its fdinfo's it_value
NOT_ACCEPTED = "its connection waits in the accept queue of a listening socket"  # a loopback peer not accepted yet
PTY_PATH = "the pseudo-terminal "  # a wait on a pty whose master a process of the job holds (capture/pipes.py)


# --- native culprits after fork (py-spy --native frames: the shared object's name) ---------------------
# (marker in the .so path, what it is, the fix). Verified: libgomp + MKL sgemm in a child forked after
# the parent ran a parallel matmul, torch 2.13 CPU (tests/scenarios/omp_after_fork.py).
NATIVE_FORK_CULPRITS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "libgomp",
        "OpenMP (libgomp)",
        (
            "Set OMP_NUM_THREADS=1 (or torch.set_num_threads(1)) in the child before it runs torch ops: GNU OpenMP's "
            "thread pool does not survive fork.",
            "Start workers with spawn or forkserver instead of fork (multiprocessing_context='spawn').",
            "Or keep the parent from running parallel ops before it forks.",
        ),
    ),
    (
        "libiomp",
        "OpenMP (Intel libiomp)",
        ("Set OMP_NUM_THREADS=1 in the child before it runs torch ops, or start it with spawn/forkserver.",),
    ),
    ("mkl", "MKL", ("Set MKL_NUM_THREADS=1 / OMP_NUM_THREADS=1 in the child, or start it with spawn/forkserver.",)),
    (
        "tokenizers",
        "tokenizers (rayon thread pool)",
        (
            "Set TOKENIZERS_PARALLELISM=false before the fork (DataLoader workers, multiprocessing).",
            "Or tokenize in the workers only, or start them with spawn.",
        ),
    ),
    (
        "libcuda",
        "CUDA",
        (
            "CUDA cannot be used in a forked child: use multiprocessing_context='spawn' (or forkserver), and do not "
            "touch CUDA in the parent before forking workers that use it.",
        ),
    ),
    (
        "libcudart",
        "CUDA runtime",
        ("CUDA cannot be used in a forked child: use multiprocessing_context='spawn' (or forkserver).",),
    ),
    ("libnccl", "NCCL", ("Do not fork after init_process_group with NCCL; start helper processes with spawn.",)),
    ("libamdhip", "ROCm (HIP)", ("ROCm and fork do not mix: use multiprocessing_context='spawn', or num_workers=0.",)),
)

# gpu: what each NVIDIA Xid means (NVIDIA's Xid catalog), and the fixes per kind of fault
XID_MEANINGS = {
    13: "Graphics Engine Exception: a kernel of the job faulted (an out-of-range access, an illegal instruction)",
    31: "GPU memory page fault: a kernel of the job touched an invalid address (MMU fault)",
    32: "invalid or corrupted push buffer stream",
    43: "GPU stopped processing: the driver reset the job's channel after a fault in its kernels",
    45: "preemptive cleanup after earlier errors (the process was ended, or a fault before this)",
    46: "GPU stopped processing",
    48: "double-bit ECC error: uncorrectable GPU memory error",
    61: "internal micro-controller breakpoint/warning",
    62: "internal micro-controller halt",
    63: "ECC page retirement or row remapping recorded",
    64: "ECC page retirement or row remapping failed",
    74: "NVLink error",
    79: "the GPU has fallen off the bus: it no longer answers the driver",
    92: "high single-bit ECC error rate",
    94: "contained ECC error: the driver stopped the affected work",
    95: "uncontained ECC error: the GPU needs a reset",
    109: "context switch timeout: a kernel of the job did not yield the GPU",
    119: "GSP RPC timeout: the GPU's system processor stopped answering",
    120: "GSP error",
}
XID_APP_FAULTS = frozenset({13, 31, 32, 43, 45, 109})  # usually the job's own kernels; the GPU itself may be fine


def signal_name(number: int) -> str:
    """A signal's name ("SIGKILL"), or its number in words where it has none ("signal 77")."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"

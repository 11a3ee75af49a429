"""What capture saw: frozen values with timestamps, never live handles.

Capture fills these; diagnosis reads them; nothing here runs a command. ``None`` always means
"could not be read" (permission, process gone, not applicable), never zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from enum import Enum

from hangwatch.records.gpu import GpuEvidence, KernelEvent  # defined with the records: incidents carry them too
from hangwatch.records.values import frozen


class Role(str, Enum):
    """The roles of a process in a job (docs/inspect.md)."""

    MAIN = "main"
    DATALOADER_WORKER = "dataloader_worker"
    RANK = "rank"
    LAUNCHER = "launcher"
    COMPILE_WORKER = "compile_worker"
    CHILD = "child"
    ORPHAN = "orphan"


@frozen
class Frame:
    """One Python frame. ``file`` is absolute when the target's path was absolute."""

    function: str
    file: str
    line: int
    code: str | None = None  # the source line's text, when the file was readable
    native: bool = False  # a C/C++ frame (native stacks only): ``file`` is its shared object
    holds: tuple[str, ...] = ()  # user frames: the locks this line runs under (`with lock:` blocks around it,
    # `lock.acquire()` above it in the same block), innermost first


@frozen
class ThreadSample:
    """One thread in one sample: state, CPU ticks, GIL, blocking call, Python frames."""

    tid: int
    name: str  # Python thread name when known, else the OS thread name (comm)
    state: str  # kernel state letter: R S D T t Z I
    wchan: str | None
    cpu_ticks: int | None  # utime + stime of this thread, in clock ticks
    active: bool | None  # py-spy's view: running Python code (None: no Python stack)
    owns_gil: bool | None
    frames: tuple[Frame, ...] = ()  # innermost first; empty when no Python stack
    syscall: str | None = None  # the blocking system call of a sleeping thread, e.g. "recvfrom"
    fd_target: str | None = None  # what that call's fd is: "tcp 127.0.0.1:5 -> 10.0.0.2:443", "pipe", a path
    # Context switches (voluntary + involuntary) counted since the first sample, outside stack reads
    # (a ptrace stop itself switches a thread twice), so a thread blocked in one call stays at 0.
    ctx_switches: int | None = None
    fd: int | None = None  # the fd of that blocking call (0: the process's standard input)
    # Whether that call can time out, from its arguments (a futex or poll with no timeout waits forever;
    # a sleep always ends); None where the call does not say (a read, a recv).
    timeout: bool | None = None
    futex: int | None = None  # the address a futex wait waits on (a lock, an event, a semaphore)
    shared_futex: bool = False  # that futex is shared between processes (a multiprocessing lock or semaphore)
    # seconds until its timer ends (the kernel's request, read at the sample): a sleep's; a futex wait's timeout; the
    # least left of a poll's (its request less the thread's age)
    wakes_in: float | None = None
    wait_child: int | None = None  # wait4/waitid: the pid of the one child it waits for (None: any, or no such wait)
    wait_max: float | None = None  # a poll (poll, epoll_wait), a sigtimedwait: the timeout it passed, in seconds;
    # it wakes by then
    signals: int | None = None  # sigwait: the signals it waits for (bit n-1: signal n), from its memory or a signalfd
    # Whether its stack was read with the process stopped (False: read without a stop, where a running thread may be
    # read torn, and a thread asleep in the kernel reads the same; None: not said, as in captures before this field).
    read_stopped: bool | None = None


@frozen
class ProcessSample:
    """One process in one sample: state, CPU, I/O counters, its threads."""

    at: float  # unix time of this sample
    state: str  # kernel state letter of the process
    cpu_seconds: float  # user + system
    rss_bytes: int | None
    read_bytes: int | None  # /proc/PID/io: storage reads
    write_bytes: int | None
    rchar: int | None  # /proc/PID/io: all read() bytes, sockets and pipes included
    wchar: int | None
    num_threads: int
    threads: tuple[ThreadSample, ...]
    stdout_size: int | None  # size of the file behind fd 1 when it is a regular file
    stack_error: str | None = None  # why no Python stacks were taken in this sample
    # /proc/PID/io syscr + syscw counted since the first sample outside stack reads (a ptrace stop
    # restarts a blocked read, which counts it again), so a process blocked in one read stays at 0.
    syscalls: int | None = None
    # a zombie's exit status as waitpid reports it (0: a clean exit; a signal in the low 7 bits; the code << 8);
    # None: not a zombie, or not read
    exit_status: int | None = None
    tracer: int | None = None  # the pid that traces it (TracerPid), read where it was in a tracing stop (t)
    # cutime + cstime, seconds: the CPU of the children it waited for. The kernel adds a reaped child's I/O counters
    # to its parent's /proc/PID/io: where this grew, rchar and wchar hold its children's bytes too
    reaped_cpu: float | None = None


@frozen
class ProcessInfo:
    """What is read of a process once: pid, role, rank, command line, environment keys."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    name: str  # comm, e.g. "python", "pt_data_worker", "pt_elastic"
    cmdline: tuple[str, ...]  # redacted
    exe: str | None
    is_python: bool
    role: Role
    rank: int | None
    local_rank: int | None
    world_size: int | None
    create_time: float
    stdout: str | None  # what fd 1 points to: a path, "pipe:[...]", "/dev/pts/3", ...
    stderr: str | None
    stdout_is_file: bool
    env: Mapping[str, str] = field(default_factory=dict)  # only the non-secret keys rules use
    forked_from_parent: bool = False  # same executable and cmdline as its parent: a fork
    stdin: str | None = None  # what fd 0 points to: "/dev/pts/3", "pipe:[...]", "/dev/null", a path
    caught_signals: int | None = None  # SigCgt of /proc/PID/status: bit n-1 set, signal n has a handler (None: unread)
    timer_signals: tuple[int, ...] | None = None  # its POSIX timers' signals, not ignored nor blocked (None: unread)
    # rank and world size read from its multiprocessing.Process target's own arguments, or its mp.spawn index with
    # every rank's connections on this host: the whole world is here, its numbers global
    rank_from_args: bool = False


MP_VALUE = "multiprocessing.Value"  # ``LocalsRead.flag``: the loop's test reads a ``.value`` its file binds only so
THREADING_EVENT = "threading.Event"  # ``LocalsRead.flag``: the loop's file binds its flag only to threading.Event()


@frozen
class LocalsRead:
    """The locals of a thread's innermost user frame at one moment (second pass, spinning threads only)."""

    at: float
    tid: int
    function: str
    file: str
    line: int
    values: tuple[tuple[str, str], ...]  # (name, short redacted repr)
    loop: str | None = None  # the source of the enclosing `while`/`for` header, when found
    body: str | None = None  # that loop's source, header and body (dedented, bounded), when found
    loop_line: int | None = None  # the line of that loop's header
    flag: str | None = None  # what the loop's test reads, where its file says (``threading.Event``): capture/flags.py
    # what the loop's test reads that only its own frame can rebind (no closure names it, no global or nonlocal
    # declares it: capture/flags.py), where its file was read; None: not read, or not a function's loop
    private: tuple[str, ...] | None = None


@frozen
class C10dWait:
    """A rank's main thread blocked in one of torch's collective or point-to-point calls, read from the call's own
    arguments: the call, the global rank at its other end (``dst``/``src`` of a send, a receive, the root of a
    broadcast, a reduce, a scatter or a gather; None: any source, or no peer), and whether it runs on the default
    group, every rank of the job (None: not known)."""

    op: str  # "all_reduce", "barrier", "send", "recv", ...
    peer: int | None = None
    world: bool | None = None
    tag: int | None = None  # a send's or a receive's tag: a send matches only a receive with the same one
    group: str | None = None  # new_group: a digest of the group's name as this rank computed it (members meet under it)
    members: tuple[int, ...] | None = None  # new_group: the group's global ranks


@frozen
class RendezvousRead:
    """What a process waiting at process-group setup waits for: the store's address (from the
    rendezvous frame's arguments or the launcher's command line), how many ranks or nodes it expects,
    and what this machine's socket tables say about the store (None: not known)."""

    host: str | None
    port: int | None
    world_size: int | None  # ranks (init_process_group) or nodes (a launcher's rendezvous)
    rank: int | None
    backend: str | None  # "gloo", "nccl" (init_process_group), "static", "c10d" (torchrun)
    hosts_store: bool | None  # this process listens on the store's port
    clients: int | None  # connections the store on this machine has accepted (its own client included)
    connected: bool | None  # this process has a connection to the store's port


UNREAD = "?"  # a LockHolder's state where the process is another user's, named and never read


@frozen
class LockHolder:
    """A process that holds (or, ``proven`` False, most likely holds) a lock another process waits for:
    who it is and what it does, measured over the capture (in the job) or a short look (outside it)."""

    pid: int
    cmdline: str  # redacted, cut
    user: str | None
    state: str | None  # kernel state letter; None: it is gone; UNREAD: another user's, not read (the agent's watches)
    cpu_percent: float | None
    moved_bytes: int | None  # read()+write() bytes (sockets, pipes, files) over the look
    age_s: float | None  # how long it has run
    in_job: bool  # part of the job's tree (hangwatch may end it) or not (named, never touched)
    frames: tuple[Frame, ...] = ()  # its main thread's stack, when it is Python
    proven: bool = True  # the kernel or a frame says it holds the lock; False: inferred
    how: str = ""  # why it is named: "listed as holding it in /proc/locks", "shares the semaphore and ..."
    took_at: str | None = None  # where its code takes the lock, when a frame or its source shows it
    # Every thread of it in a private futex wait with no timeout, none woken over the look: only a thread of
    # its own could wake it, and none can (None: not measured).
    parked: bool | None = None
    wakes_in: float | None = None  # asleep: seconds until its main thread's timer ends, when it could be read
    sleeping: bool | None = None  # its main thread is in a sleep system call (nanosleep, clock_nanosleep)
    # A holder outside the job whose main thread waits for its children with no timeout (wait4, waitid: `flock FILE
    # cmd`, a shell running a pipeline's `(sleep 30; echo y)`): those children, each read as a holder, one level.
    waits_for: tuple[LockHolder, ...] = ()
    stdin: str | None = None  # what its fd 0 points to ("/dev/pts/3": a person may be at it); None: not read
    call: str | None = None  # the system call its main thread waits in ("wait4", "poll"), where it was read


# A LockWait's note when the wait is one of the files a poll (or an event loop's epoll) waits on, all followed.
# The note of a wait on one file of a poll (recorded fixtures keep this text); a poll whose timeout ends past the job's
# bounds is followed too (capture/pipes.py: polls_forever), its timeout weighed by the graph.
POLLED = "one of the files a poll with no timeout waits on"
# LockWait kinds: a read that any holder of the file ends by acting on it (a write, an arming, a file added), never by
# its exit; a thread's reads (bytes, a count, a tick, a file added); the files whose other end may be its own alone
ANY_HOLDER_KINDS = frozenset({"eventfd", "timerfd", "epoll"})
READ_KINDS = frozenset({"pipe", "socket"}) | ANY_HOLDER_KINDS
CLOSED_KINDS = READ_KINDS | {"pipe_full", "socket_full"}


@frozen
class LockWait:
    """What one blocked thread waits for: a file lock or a semaphore shared across processes."""

    tid: int
    kind: str  # "flock", "posix", "ofd", "filelock" (the package's polling acquire), "semaphore", "pipe" (a read),
    # "pipe_full" (a write into a full pipe), "socket" (a read), "socket_full" (a write into a full socket)
    path: str | None  # the lock file, or the semaphore's /dev/shm file
    timeout: bool | None  # whether the wait can time out (None: unknown)
    holders: tuple[LockHolder, ...] = ()  # proven holders first; empty: none found
    sharers: tuple[int, ...] = ()  # semaphores: the job's processes that map it
    waiters: tuple[int, ...] = ()  # the processes waiting for it
    value: int | None = None  # a semaphore's count (0: taken)
    name: str | None = None  # the lock's name in the waiter's source line (`cache_lock`)
    note: str | None = None


@frozen
class VanishedProcess:
    """A process of the job that the supervisor saw, and then saw gone (``inspect`` has none of these)."""

    pid: int
    ppid: int
    name: str  # comm
    cmdline: str  # redacted, cut
    started_at: float  # unix time
    gone_at: float  # when it was first seen gone (within the supervisor's scan interval)
    replaced_by: int | None = None  # a sibling with the same command started as it went (a pool's replacement)
    reason: str | None = None  # why, when the kernel log says so ("killed by the OOM killer")


@frozen
class CollectiveEntry:
    """One entry of a rank's flight recorder: a collective the rank entered, and whether it completed."""

    group: str  # the process group ("default_pg", or its name)
    seq: int  # collective_seq_id: 1, 2, 3... per group, the same on every rank for the same collective
    op: str  # "all_reduce", "barrier", "broadcast", ...
    state: str  # "scheduled", "started", "completed" (gloo stays "scheduled")
    retired: bool  # completed (on gloo the only sign of it)
    created_at: float  # unix time it was entered
    backend: str | None = None  # "gloo", "nccl"
    p2p_seq: int = 0
    input_sizes: tuple[tuple[int, ...], ...] = ()
    output_sizes: tuple[tuple[int, ...], ...] = ()
    dtypes: tuple[str, ...] = ()
    frame: Frame | None = None  # the user's line that called it (from the recorder's frames), when known
    timeout_ms: int | None = None

    @property
    def done(self) -> bool:
        """It completed."""
        return self.retired or self.state == "completed"


@frozen
class GroupStatus:
    """A process group's own counters in the recorder (pg_status)."""

    group: str
    last_enqueued: int | None
    last_started: int | None
    last_completed: int | None


@frozen
class FlightRecord:
    """What a rank's flight recorder said at the capture, or why it said nothing (a rank that does not
    answer is itself evidence)."""

    answered: bool
    via: str | None  # "hangwatch_fr" (entries with frames), "fr_trace_json" (no frames), "fifo"
    error: str | None
    seconds: float  # how long the answer took
    entries: tuple[CollectiveEntry, ...] = ()  # the newest few per process group, oldest first
    status: tuple[GroupStatus, ...] = ()
    has_frames: bool = False
    version: str | None = None  # the recorder's format version
    raw: str | None = field(default=None, compare=False, repr=False)  # the whole dump (saved with an incident)


@frozen
class NativeStack:
    """One thread's stack with native frames interleaved (py-spy --native), innermost first."""

    tid: int
    frames: tuple[Frame, ...]


@frozen
class LoaderTask:
    """The batch a DataLoader worker works on: as the job's own DataLoader iterator recorded it (the autobeat hook,
    under `hangwatch run --on-hang heal`: its oldest batch not yet returned, a worker takes its batches in order), or
    as the worker's own loop's locals show it at the look (``from_locals``: no times, the indices py-spy shows,
    about 128 characters)."""

    worker_pid: int
    worker_id: int  # the worker's number in its DataLoader (0..num_workers-1)
    batch: int  # the iterator's batch number in this epoch; -1: it holds none
    count: int  # sample indices in that batch; -1: more than ``indices`` (their count not read)
    indices: tuple[int, ...]  # its first sample indices (up to 64; empty where the sampler gave no numbers)
    sent: float  # unix time the batch was sent to the worker
    since: float  # unix time it started on it (its previous batch came back, or it was sent)
    iterable: bool  # an IterableDataset: there are no sample indices, the batch is the worker's position
    dataset: str  # the dataset's class name
    healable: bool = False  # under --on-hang heal, the hook can replace this iterator's workers
    from_locals: bool = False  # read from the worker's locals at the look (sent and since not known: 0)


@frozen
class Rearm:
    """A function of the user's that starts a ``threading.Timer`` of itself (``Timer(1.0, flush)`` inside ``flush``),
    read from the source at the capture of a process with a Timer thread: each timer it starts starts the next."""

    function: str
    file: str
    line: int  # the line of the ``Timer(...)`` call
    code: str | None  # that line's text (redacted)
    conditional: bool  # the call is under an ``if``, a loop or a ``try`` of the function: it may not re-arm


@frozen
class ExitTimer:
    """A call in the user's files that arms a timer ending the process when it fires, read from the source at capture:
    faulthandler's (``dump_traceback_later(N, exit=True)``: it dumps the stacks and exits; read where a thread with no
    Python stack, its watchdog, is there) or the kernel's alarm (``signal.alarm(N)``, ``setitimer(ITIMER_REAL, N)``:
    SIGALRM ends the process where no handler catches it)."""

    kind: str  # "faulthandler" or "alarm"
    seconds: float | None  # N, where the call writes it as a number
    file: str
    line: int
    code: str | None  # that line's text (redacted)


@frozen
class ProcessEvidence:
    """One process across the capture: its info and its samples."""

    info: ProcessInfo
    samples: tuple[ProcessSample, ...]
    exited: bool = False  # it was seen, then disappeared during the window
    output_tail: str | None = None  # redacted tail of the job's log file (fd 1 or 2), if a file
    locals: tuple[LocalsRead, ...] = ()  # read twice, apart, for threads that spin in one user function
    native: tuple[NativeStack, ...] = ()  # one native read, when Python's stack explained nothing (or --native)
    rendezvous: RendezvousRead | None = None  # read for processes waiting at process-group setup
    waits: tuple[LockWait, ...] = ()  # what its blocked threads wait for across processes (file locks, semaphores)
    writing: tuple[tuple[str, int], ...] = ()  # (path, size) of files it has open for writing, when it wrote
    flight: FlightRecord | None = None  # a rank's flight recorder (None: not a rank, or not under hangwatch run)
    loader_task: LoaderTask | None = None  # a DataLoader worker: the batch it holds (None: not recorded nor read)
    c10d: C10dWait | None = None  # a rank blocked in a collective or point-to-point call: which, with whom
    rearms: tuple[
        Rearm, ...
    ] = ()  # where a Timer thread was seen: the user's functions that start a Timer of themselves
    # at the exit's join beside two threads or more: the thread names the user's files start as daemons only
    daemons: tuple[str, ...] = ()
    exit_timers: tuple[ExitTimer, ...] = ()  # the timers its source arms that end it when they fire
    tracer: LockHolder | None = None  # in a tracing stop throughout: the process that traces it (gdb, strace), read
    # a loop of it reads a multiprocessing Value: the other processes of the host that map its heap's memory, read
    # after the samples (None: not read)
    heap_sharers: tuple[int, ...] | None = None


@frozen
class Evidence:
    """A capture: every process of the job sampled over a window, with notes on what could not be read."""

    target_pid: int
    root_pid: int
    started_at: float
    ended_at: float
    clock_ticks: int
    cpu_count: int
    processes: tuple[ProcessEvidence, ...]
    notes: tuple[str, ...] = ()  # capture problems a person should know about
    # (rank, unix time, step) of each rank's last progress, from heartbeats and rank-prefixed
    # output, when the supervisor knows it (empty for `inspect`)
    rank_progress: tuple[tuple[int, float, int | None], ...] = ()
    gpu: GpuEvidence | None = None  # None: no GPU, or none could be read (a note says why)
    kernel: tuple[KernelEvent, ...] = ()  # kernel log lines since the job started that matter
    known_pids: tuple[int, ...] = ()  # every pid the supervisor saw in the job, dead ones included (kernel
    # lines name victims that are gone by the capture)
    vanished: tuple[VanishedProcess, ...] = ()  # processes of the job that went away (the supervisor's history)
    timer_bound_s: float | None = None  # --max-slow: a timer ending later than this from the look ends too late

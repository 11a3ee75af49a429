"""The catalogue of causes: every cause id hangwatch can name, what it means, whether it is hung by
nature, whether a requeue may pass it, its fixes and its remedy ladder. Diagnosis, remedies, bounds, exit
codes, metrics and renderers read it; the docs' table of causes is generated from it
(``python -m hangwatch.causes``). An id is never reused for another meaning (docs/causes.md)."""

from __future__ import annotations

from enum import Enum

from hangwatch.fixes import (
    BATCH_LOST_FIX,
    BUFFERED_FIX,
    BUSY_FIX,
    CHILD_WAIT_FIX,
    COLLECTIVE_STALLED_FIX,
    COMPILE_FIX,
    COMPUTING_FIX,
    CUDA_FORK_FIX,
    DEADLOCK_FIX,
    FORK_FIX,
    GPU_HARDWARE_FIX,
    INPUT_FIX,
    LOCK_WAIT_FIX,
    LONG_KERNEL_FIX,
    LOST_WORK_FIX,
    NETWORK_FIX,
    OOM_FIX,
    PEER_FIX,
    PIPE_WAIT_FIX,
    RENDEZVOUS_FIX,
    SHUTDOWN_FIX,
    STOPPED_FIX,
    STORAGE_FIX,
    STRAGGLER_FIX,
    UNKNOWN_FIX,
    WORKER_DIED_FIX,
    WORKER_SLOW_FIX,
    WORKER_STUCK_FIX,
)
from hangwatch.records.values import frozen


class Cause(str, Enum):
    """A cause id, as findings, incidents and metrics spell it (``str(Cause.X)`` is the id)."""

    DATALOADER_WORKER_STUCK = "dataloader.worker_stuck"
    DATALOADER_WORKER_SLOW = "dataloader.worker_slow"
    DATALOADER_BATCH_LOST = "dataloader.batch_lost"
    DATALOADER_WORKER_DIED = "dataloader.worker_died"
    DATALOADER_SHUTDOWN = "dataloader.shutdown"
    FORK_INHERITED_LOCK = "fork.inherited_lock"
    FORK_AFTER_CUDA = "fork.after_cuda"
    CODE_BUSY_LOOP = "code.busy_loop"
    CODE_DEADLOCK = "code.deadlock"
    CODE_COMPUTING = "code.computing"
    PROCESS_WAITS_FOR_INPUT = "process.waits_for_input"
    PROCESS_STOPPED = "process.stopped"
    CHILD_WAIT = "child.wait"
    PROCESS_WAITS_ON = "process.waits_on"
    CHILD_LOST_WORK = "child.lost_work"
    IO_NETWORK_WAIT = "io.network_wait"
    IO_STORAGE_WAIT = "io.storage_wait"
    IO_LOCK_WAIT = "io.lock_wait"
    DISTRIBUTED_PEER_STUCK = "distributed.peer_stuck"
    DISTRIBUTED_STRAGGLER = "distributed.straggler"
    DISTRIBUTED_COLLECTIVE_STALLED = "distributed.collective_stalled"
    DISTRIBUTED_RENDEZVOUS_WAIT = "distributed.rendezvous_wait"
    COMPILE_IN_PROGRESS = "compile.in_progress"
    OUTPUT_BUFFERED = "output.buffered"
    GPU_FAULT = "gpu.fault"
    GPU_LONG_KERNEL = "gpu.long_kernel"
    MEMORY_OOM = "memory.oom"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def info(self) -> CauseInfo:
        """The cause's entry in the catalogue."""
        return CATALOGUE[self]


class Nature(str, Enum):
    """What a cause says about the job by itself, before any clock."""

    HUNG = "hung"  # hung once seen: nothing in the job can end the wait (or proof decides at once)
    ALIVE = "alive"  # working: slow, bounded by --max-slow or the job's history
    WAITING = "waiting"  # waiting for a peer that may still come: bounded by --rendezvous-timeout / --max-slow
    EVIDENCE = "by the evidence"  # hung or alive, by what the capture shows (a holder, a child, the bytes)
    CRASHED = "crashed"  # named when the job has ended with an error, or is about to (a look shows it raising)

    def __str__(self) -> str:
        return self.value


class Requeue(str, Enum):
    """Whether a hang of this cause is worth a requeue (exit 124) or not (125): recover/exitcode.py."""

    DETERMINISTIC = "no: a bug at a line of the job's code"
    TRANSIENT = "yes: it can pass by itself"
    BY_PROOF = "no when proven at the job's line, else yes"

    def __str__(self) -> str:
        return self.value


@frozen
class CauseInfo:
    """One cause's entry."""

    meaning: str  # one line (the docs' table)
    nature: Nature
    requeue: Requeue
    fix: tuple[str, ...]  # the default fixes, most likely first (a finding may say more precise ones)
    ladder: tuple[str, ...] = ()  # the remedies a restart tries, in order (recover/remedy.py REMEDIES)
    by_history: bool = True  # an alive finding of this cause is bounded by the job's step and phase history
    requeue_why: str = ""  # why a requeue can never help (exit 125 at once), where that is so
    # The phase this cause is, the one the startup hook declares with --max-slow as its deadline ("compile"): a look
    # that finds it treats the job as in that phase, whoever saw it first (no `slow` incident before --max-slow).
    phase: str | None = None
    # The graph's own words for a wait (a child, a pipe's holder) that a more precise namer may name at the same place:
    # where it reads the job as alive too, that namer names the wait and this cause's proof moves to it.
    generic: bool = False
    # The cause is progress that the job's signal does not show (a log buffered into a file): a look that measures
    # the job computing calls it progressing, not slow.
    unseen_progress: bool = False


CATALOGUE: dict[Cause, CauseInfo] = {
    Cause.DATALOADER_WORKER_STUCK: CauseInfo(
        "a DataLoader worker is blocked or spinning in dataset / collate / iterable code; main waits",
        Nature.HUNG,
        Requeue.BY_PROOF,
        WORKER_STUCK_FIX,
        ladder=("workers0",),
    ),
    Cause.DATALOADER_WORKER_SLOW: CauseInfo(
        "a DataLoader worker is alive on its batch (computing, sleeping and retrying, reading) while "
        "main waits: `slow`, bounded by the job's history, then `dataloader.worker_stuck`",
        Nature.ALIVE,
        Requeue.BY_PROOF,
        WORKER_SLOW_FIX,
    ),
    Cause.DATALOADER_SHUTDOWN: CauseInfo(
        "main ends its DataLoader workers (torch joins each for up to 5 s, then terminates it): it ends by itself",
        Nature.ALIVE,
        Requeue.TRANSIENT,
        SHUTDOWN_FIX,
    ),
    Cause.DATALOADER_BATCH_LOST: CauseInfo(
        "main waits, every worker is alive and idle: a result failed to pickle or shared memory ran out",
        Nature.HUNG,
        Requeue.BY_PROOF,
        BATCH_LOST_FIX,
        ladder=("workers0",),
    ),
    Cause.DATALOADER_WORKER_DIED: CauseInfo(
        "a DataLoader worker exited or was killed (a signal, the OOM killer, a bus error from a full "
        "/dev/shm): the job crashed with DataLoader's error, or (a look before torch's next check of its workers) "
        "its main process waits for the dead worker's batch and raises at that check",
        Nature.CRASHED,
        Requeue.TRANSIENT,
        WORKER_DIED_FIX,
        ladder=("fewer_workers", "workers0"),
    ),
    Cause.FORK_INHERITED_LOCK: CauseInfo(
        "a forked worker waits on a lock another thread of the parent held at fork time",
        Nature.HUNG,
        Requeue.BY_PROOF,
        FORK_FIX,
        ladder=("spawn", "workers0"),
    ),
    Cause.FORK_AFTER_CUDA: CauseInfo(
        'a forked process (a DataLoader worker) used CUDA its parent had started: it raises at once ("Cannot '
        're-initialize CUDA in forked subprocess") and the job crashes; the same fork crashes again',
        Nature.CRASHED,
        Requeue.DETERMINISTIC,
        CUDA_FORK_FIX,
        ladder=("spawn", "workers0"),
    ),
    Cause.CODE_BUSY_LOOP: CauseInfo(
        "a process spins at high CPU in the same user code without getting anywhere; one that another thread of "
        "the user's code, alive, may still end (`while not state['ready']: pass` beside its prefetch thread) is "
        "`slow`",
        Nature.HUNG,
        Requeue.DETERMINISTIC,
        BUSY_FIX,
    ),
    Cause.CODE_DEADLOCK: CauseInfo(
        "threads wait on locks/events/queues that no running thread will release; also a lock held "
        "across processes: a DataLoader worker waits for a `multiprocessing` lock that the main "
        "process holds while it waits for that worker's batch (both sides named: who waits where, who"
        ' holds it at which line; when no frame shows it, "held by another process of the job, most '
        'likely main (pid N), which is not waiting for it", with the line of its code that takes it),'
        " and a `multiprocessing` lock whose holder died (every process that shares it waits for it: "
        "it is never released); also a file lock (flock, OFD) its own process holds through another open of the file",
        Nature.HUNG,
        Requeue.DETERMINISTIC,
        DEADLOCK_FIX,
    ),
    Cause.CODE_COMPUTING: CauseInfo(
        "a CPU-bound loop that walks its data (read from its locals), or one long GIL-holding call: "
        "proven work, `slow` until `--max-slow`, never hung by the step history",
        Nature.ALIVE,
        Requeue.BY_PROOF,
        COMPUTING_FIX,
    ),
    Cause.PROCESS_WAITS_FOR_INPUT: CauseInfo(
        "the job is blocked reading its standard input or the terminal: `input()`, a `getpass` login "
        "prompt (W&B, HF), a forgotten `breakpoint()`/`pdb.set_trace()`, a native child started without "
        "`stdin=` that asks on the job's terminal (unzip's overwrite question, git's user name: named at the line "
        "that waits for it). Names the prompt (the job's "
        "last output line), the line, and whether stdin is a terminal, a pipe or /dev/null. On a terminal, "
        "hung at once: nobody will type. On a pipe, its writers decide (each named, with what it does): one "
        "that may still write keeps it slow",
        Nature.HUNG,
        Requeue.DETERMINISTIC,
        INPUT_FIX,
        requeue_why="a requeued job would wait at the same prompt",
    ),
    Cause.PROCESS_STOPPED: CauseInfo(
        "a process of the job is stopped in every sample (SIGSTOP, Ctrl-Z, a debugger): hung with proof, unless a "
        "tracer that is alive holds it (strace, a person's gdb): then `slow`",
        Nature.HUNG,
        Requeue.TRANSIENT,
        STOPPED_FIX,
    ),
    Cause.CHILD_WAIT: CauseInfo(
        "the job waits on a subprocess; hung only when that child is itself stuck (blocked, spinning,"
        " stopped). A child idle in its own wait for work is said to be idle, and the diagnosis looks"
        " for lost work",
        Nature.EVIDENCE,
        Requeue.BY_PROOF,
        CHILD_WAIT_FIX,
        generic=True,
    ),
    Cause.PROCESS_WAITS_ON: CauseInfo(
        "waits on something another process holds that no other cause names (the write end of a pipe it "
        "reads, found by inode in every process, the job's or the host's): the wait-for graph follows it to "
        "the holder, which decides. Working: `slow` (its proof of work), named by a more precise cause at the same "
        "line if one reads it as alive too (a compile reading its compiler), which takes the proof; blocked or "
        "stopped: hung; only the waiter itself holds it: hung at once. A holder outside the job is named, never "
        "touched. Under `hangwatch agent`, only the job's user's processes are searched: another user's holder "
        "is named, never read, and proves nothing",
        Nature.EVIDENCE,
        Requeue.BY_PROOF,
        PIPE_WAIT_FIX,
        generic=True,
    ),
    Cause.CHILD_LOST_WORK: CauseInfo(
        "a process of the job vanished while holding work the rest still waits for: a "
        "`multiprocessing.Pool` worker (or `multiprocess`'s, as HF datasets' `map(num_proc=N)` uses) killed "
        "mid-task (the OOM killer) leaves `Pool.map` waiting "
        "forever while every worker is idle. `hangwatch run` names the process that went, when, its "
        "replacement and (from the kernel log) why; `inspect` infers it from a worker that started "
        "later than its siblings, and says so",
        Nature.HUNG,
        Requeue.TRANSIENT,
        LOST_WORK_FIX,
    ),
    Cause.IO_NETWORK_WAIT: CauseInfo(
        "blocked in a network call (socket, HTTP, hub or dataset streaming)",
        Nature.EVIDENCE,
        Requeue.TRANSIENT,
        NETWORK_FIX,
        by_history=False,
    ),
    Cause.IO_STORAGE_WAIT: CauseInfo(
        "uninterruptible (D) kernel wait on storage for the whole window",
        Nature.EVIDENCE,
        Requeue.TRANSIENT,
        STORAGE_FIX,
        by_history=False,
    ),
    Cause.IO_LOCK_WAIT: CauseInfo(
        "waits for a lock another process holds: a file lock (`flock`, POSIX, OFD from `/proc/locks`,"
        " and the `filelock` package's polling acquire, as Hugging Face datasets and hub use), or a "
        "`multiprocessing` lock or semaphore shared between processes. Names the lock, and its "
        "holder: pid, user, command, age, state and stack, inside or outside the job (a holder "
        "outside the job is named, never touched). The holder decides: gone, hung at once; blocked, "
        "asleep or stopped, hung; working, `slow` (its proof of work); a soft lock file no process has open, or "
        "a semaphore taken that every sharer waits for, waited for with no timeout: hung at once (nobody can "
        "release it)",
        Nature.EVIDENCE,
        Requeue.TRANSIENT,
        LOCK_WAIT_FIX,
    ),
    Cause.DISTRIBUTED_PEER_STUCK: CauseInfo(
        "some ranks wait in a collective; the culprit rank (in `where.rank`) is elsewhere and itself "
        "blocked, spinning or stopped, or in a different collective, or making a group under another name (a group "
        "made on some ranks only); from torch's flight recorder "
        "when it was read (the rank that never entered collective #N, or a mismatch at #N)",
        Nature.HUNG,
        Requeue.BY_PROOF,
        PEER_FIX,
    ),
    Cause.DISTRIBUTED_STRAGGLER: CauseInfo(
        "one rank works (bytes moving, CPU with a moving stack, a loop walking its data) while the "
        "others wait for it in a collective or barrier: `waiting`, bounded by `--max-slow`, never a "
        "culprit (a rank that downloads the weights before `dist.barrier()`)",
        Nature.WAITING,
        Requeue.TRANSIENT,
        STRAGGLER_FIX,
    ),
    Cause.DISTRIBUTED_COLLECTIVE_STALLED: CauseInfo(
        "every rank entered the same collective and none completed it (torch's flight recorder): the "
        "transport (network, NCCL, the devices) stalled, not the code",
        Nature.HUNG,
        Requeue.TRANSIENT,
        COLLECTIVE_STALLED_FIX,
    ),
    Cause.DISTRIBUTED_RENDEZVOUS_WAIT: CauseInfo(
        "ranks (or torchrun itself) wait at process-group setup for peers: the store's address, how "
        "many joined of how many (from this machine's TCP table: nothing is sent to the store), how "
        "long, and torch's own timeout (gloo 30 min, NCCL 10 min, torchrun's static/c10d rendezvous "
        "600 s). Verdict `waiting` until `--rendezvous-timeout`, then `hung`",
        Nature.WAITING,
        Requeue.TRANSIENT,
        RENDEZVOUS_FIX,
    ),
    Cause.COMPILE_IN_PROGRESS: CauseInfo(
        "torch.compile / inductor is compiling: alive, not hung",
        Nature.ALIVE,
        Requeue.TRANSIENT,
        COMPILE_FIX,
        ladder=("no_compile",),
        by_history=False,
        phase="compile",
    ),
    Cause.OUTPUT_BUFFERED: CauseInfo(
        "the job progresses, but stdout is block-buffered into a file so the log looks frozen",
        Nature.ALIVE,
        Requeue.BY_PROOF,
        BUFFERED_FIX,
        by_history=False,
        unseen_progress=True,
    ),
    Cause.GPU_FAULT: CauseInfo(
        "the GPU or its driver failed: an Xid / amdgpu fault in the kernel log, a GPU fallen off the bus",
        Nature.HUNG,
        Requeue.TRANSIENT,
        GPU_HARDWARE_FIX,
    ),
    Cause.GPU_LONG_KERNEL: CauseInfo(
        "a GPU busy for the whole window while the host waits: a long kernel, or one kernel spinning at idle "
        "power; alive until --max-slow",
        Nature.ALIVE,
        Requeue.TRANSIENT,
        LONG_KERNEL_FIX,
        by_history=False,
    ),
    Cause.MEMORY_OOM: CauseInfo(
        "the OOM killer killed a process (named from the kernel log), or the cgroup counted an OOM kill",
        Nature.CRASHED,
        Requeue.TRANSIENT,
        OOM_FIX,
    ),
    Cause.UNKNOWN: CauseInfo(
        "nothing matched; the stacks and the summary still stand: where main is, the loop around it where capture "
        "read it (`in a loop at line 19 (while not os.path.exists(marker))`), and what says it is alive",
        Nature.EVIDENCE,
        Requeue.BY_PROOF,
        UNKNOWN_FIX,
    ),
}


def cause_of(text: str) -> Cause:
    """The catalogue's member for an id read back from a file (an id this version does not know: unknown)."""
    try:
        return Cause(text)
    except ValueError:
        return Cause.UNKNOWN


# The causes that are a phase of the job (CauseInfo.phase): a look that names one finds the job in that phase.
PHASE_CAUSES = frozenset(c for c, i in CATALOGUE.items() if i.phase is not None)

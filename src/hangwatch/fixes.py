"""TODO docstring."""

from __future__ import annotations

# --- fixes: what to do about each cause, most likely first (findings quote them) ------------------
# code
BUSY_FIX = (
    "Fix the loop at the location shown: its exit condition is never met for this input.",
    "Log the loop's inputs (sample index, file) before it to find the input that triggers it.",
)

# A loop that only sleeps and wakes, with nothing in it that could end it (`while True: time.sleep(1)`).
NO_WAY_OUT_FIX = (
    "Give the loop at the location shown a way out that something still running will take: a condition code that "
    "runs does change (a threading.Event set when the work ends, on every path), a bound on its turns or a deadline.",
    "If it keeps the process alive while other work goes on, wait on that work itself, with a timeout "
    "(`thread.join(600)`, `child.wait(timeout=600)`), so the process ends when the work does.",
)

SPIN_WAIT_FIX = (
    "Wait instead of spinning: for another thread, have it set a threading.Event (or put on a queue.Queue) and wait "
    "on that with a timeout, `done.wait(600)`; for a deadline, sleep until it, `time.sleep(max(0, deadline - "
    "time.monotonic()))`. A wait costs no CPU (and one with a timeout ends with an error if what it waits for never "
    "comes).",
)

WAIT_FOREVER_FIX = (
    "Nothing left in the process can set what it waits for: the thread that should (a producer, a "
    "callback) has exited or never started. Make it signal on every path, including errors.",
    "Use timeouts: Event.wait(timeout=...), Queue.get(timeout=...), Thread.join(timeout=...), so a wait "
    "that can never end raises.",
)

# A wait no running thread will end, while the process's other threads wait themselves (alive, but none acts).
OTHERS_WAIT_FIX = (
    "If the thread meant to set, notify, put or mark done what this one waits for is among those waiting (above), "
    "make it reach that call without first waiting on what only this thread provides after its own wait (a bounded "
    "queue it drains later, a result it collects later); if it has exited, make it signal on every path, errors "
    "included (task_done() after each get(), a release or set() in a `finally:`).",
    *WAIT_FOREVER_FIX[1:],
)

# The interpreter's exit joins a non-daemon thread that never ends.
EXIT_JOIN_FIX = (
    "Make the thread a daemon (threading.Thread(..., daemon=True)) or stop it on every path out of the program, "
    "errors included (try/finally: stop.set(); thread.join(timeout=...)).",
    "If an exception ended the program, read it above the hang in the log: that is the real error.",
)

# Every thread of one process waits, each on what only another of them could release or set.
ALL_ASLEEP_FIX = (
    "Every thread of the process waits on another of its threads, so none can move: a ring of locks taken in two "
    "orders, or a thread waiting for an event or a queue that only a waiting thread would set. Take locks in one "
    "order everywhere, and call nothing that takes a lock while holding one: a log call formats its arguments "
    "inside the handler's lock (their `__repr__`/`__str__` run there), a destructor may run inside any call.",
    "Bound the waits (Lock.acquire(timeout=...), Event.wait(timeout=...), Queue.get(timeout=...)), so a ring "
    "raises instead of holding the job.",
)

IMPORT_LOCK_FIX = (
    "A thread waits on a module's import lock, which the thread importing that module holds until the module's top "
    "level ends: a module that starts a thread at import time and waits for it (a join, a future's result) while "
    "that thread imports the same module (a lazy import inside it) waits for ever. Start the thread from a function "
    "called after the import, or import what the thread needs before starting it.",
    *ALL_ASLEEP_FIX[1:],
)

REENTERED_LOCK_FIX = (
    "A thread takes a lock it already holds, and a threading.Lock is not re-entrant: do not take it in code that can "
    "run inside the locked block (a signal handler, a __del__, a logging handler, a callback). There, set a flag "
    "and act on it once the block is left (or call loop.call_soon_threadsafe).",
    "Or make the lock a threading.RLock, if taking it again on the same thread is safe for the data it guards.",
)

LOOP_BLOCKED_FIX = (
    "Do not block the event loop's own thread on a result the loop must produce: in a coroutine, `await` it "
    "(`await asyncio.wrap_future(fut)` for a concurrent future); call `run_coroutine_threadsafe(...).result()` only "
    "from other threads (check `asyncio.get_running_loop() is not loop` first).",
    "From a synchronous callback of the loop, schedule the work (`loop.create_task(...)`) instead of waiting for it.",
)

# A coroutine blocks its event loop's thread in a threading lock's acquire (the holder may be a task of that loop).
LOOP_LOCK_FIX = (
    "In a coroutine, a threading.Lock's acquire() blocks the whole event loop, and a task of that loop suspended at "
    "an `await` while holding the lock never runs again to release it: use asyncio.Lock (`async with lock:`) in "
    "coroutines, and never hold a threading lock across an `await`.",
    "Run blocking calls off the loop's thread: `await loop.run_in_executor(None, fn)` or `await "
    "asyncio.to_thread(fn)`.",
)

FUTURE_IN_POOL_FIX = (
    "A task must not wait for another task of its own executor: with every worker waiting, the task it waits "
    "for never gets a worker. Submit the inner work from outside the pool, use a second executor for it, or "
    "call the function directly inside the task.",
    "Bound the wait: future.result(timeout=...) raises TimeoutError instead of waiting forever.",
)

EXECUTOR_FIX = (
    "ProcessPoolExecutor(max_tasks_per_child=...) on Python 3.11 to 3.14 can stop replacing workers that "
    "reached their limit (cpython gh-115634): leave max_tasks_per_child unset, or upgrade to a Python with the "
    "fix.",
    "Bound the wait: future.result(timeout=...) raises TimeoutError instead of waiting forever.",
)

# One thread waits for a lock that no running thread will release, with no cycle of locks: whoever took it keeps it.
LOCK_KEPT_FIX = (
    "The thread that took the lock will not release it: it ended (returned or raised) without a release, or it holds "
    "the lock while it waits itself (the other threads above); or a generator or coroutine holds it, suspended at a "
    "`yield` or an `await` inside `with lock:`, until it is resumed or closed. Take it with `with lock:`, or release "
    "it in a `finally:`, and never wait on anything else, nor yield, while holding it.",
)

DEADLOCK_FIX = (
    "Take locks in one fixed order everywhere, or hold one lock at a time.",
    "Use timeouts on lock.acquire(timeout=...), Event.wait(timeout=...) and Queue.get(timeout=...) "
    "so a wait that can never end raises.",
    "Add faulthandler.dump_traceback_later() for a post-mortem of every thread.",
)

# compile
COMPILE_FIX = (
    "Nothing is wrong yet: give it time (first compiles of large models take minutes).",
    "TORCH_LOGS=recompiles shows whether it recompiles for new shapes; mark_dynamic or dynamic=True avoids that.",
    "Keep the compile cache on local disk (TORCHINDUCTOR_CACHE_DIR) so restarts do not recompile.",
    "If it never finishes: TORCHINDUCTOR_COMPILE_THREADS=1, or TORCHDYNAMO_DISABLE=1 to run without compile.",
)

# crash
OOM_FIX = (
    "Lower memory use: smaller batch, fewer DataLoader workers or prefetch_factor, numpy arrays instead "
    "of Python lists in the Dataset (copy-on-access makes each worker copy them).",
    "Raise the memory limit of the job or container.",
)

SHM_FIX = (
    "Raise /dev/shm: `docker run --shm-size=8g` (or --ipc=host); Kubernetes: an emptyDir with medium: Memory.",
    "Fewer workers or a smaller prefetch_factor; torch.multiprocessing.set_sharing_strategy('file_system').",
)

WORKER_DIED_FIX = (
    "Read the worker's own error above the DataLoader message; run with num_workers=0 for a plain traceback.",
    "A worker killed by signal 9 was almost always the OOM killer: see `dmesg | grep -i oom`.",
)

CUDA_FORK_FIX = (
    "DataLoader(..., multiprocessing_context='spawn') (or 'forkserver'); for processes of your own, "
    "torch.multiprocessing.set_start_method('spawn').",
    "Or keep CUDA out of the dataset and collate_fn: return CPU tensors and move each batch to the GPU in the "
    "training loop (pin_memory=True keeps that copy fast).",
)

GPU_FIX = (
    "Check the GPU: `nvidia-smi -q`, `dmesg | grep -i xid`; restart the node or exclude the device.",
    "CUDA errors are asynchronous: CUDA_LAUNCH_BLOCKING=1 shows the real failing call.",
)

CUDA_OOM_FIX = (
    "Smaller batch or sequence length, gradient accumulation, activation checkpointing, mixed precision.",
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation.",
)

# dataloader
WORKER_STUCK_FIX = (
    "Fix the code at the location shown: it never returns for this sample (a wait, a lock or a loop).",
    "DataLoader(timeout=600) so a stuck worker raises instead of hanging silently.",
    "Run once with num_workers=0 to reproduce it in the main process with a plain traceback.",
)

SHUTDOWN_FIX = (
    "Nothing to do: torch ends its DataLoader workers, waiting up to 5 s for each before it terminates it.",
    "If it takes this long at every epoch's end, make the workers exit promptly (a worker_init_fn that starts "
    "threads or holds files can keep one alive), or use persistent_workers=True so they end once.",
)

WORKER_SLOW_FIX = (
    "The worker is moving, only slowly: profile the dataset code shown, or add workers.",
    "DataLoader(timeout=600) so a truly stuck sample raises.",
)

BATCH_LOST_FIX = (
    "Read the workers' stderr for a traceback in multiprocessing/queues.py _feed: the batch could not "
    "be sent (unpicklable sample, or /dev/shm full).",
    "Return plain tensors or numpy arrays from __getitem__ and check `pickle.dumps(dataset[0])`.",
    "If /dev/shm is small (containers default to 64 MiB), raise it: `docker run --shm-size=8g` or --ipc=host.",
    "DataLoader(timeout=600) so a lost batch raises instead of hanging forever.",
)

# A lock taken in Popen's preexec_fn, which runs in the forked child before exec, where only the forking thread lives.
PREEXEC_FIX = (
    "Popen's preexec_fn runs in the child between fork and exec, where only the forking thread exists: a lock "
    "another thread held at the fork is never released there. Take no lock in it (and start no thread): use "
    "Popen's own arguments (start_new_session=, process_group=, user=, umask=), or set up in the child's command.",
    "Or make the lock safe to take after a fork: os.register_at_fork(after_in_child=...) recreating it.",
)

FORK_FIX = (
    "DataLoader(multiprocessing_context='spawn') (or 'forkserver'): workers then start without the "
    "parent's held locks and thread pools.",
    "Start background threads (and use OpenMP/tokenizers) only after the DataLoader iterators exist, "
    "or recreate the lock in the child with os.register_at_fork(after_in_child=...).",
    "OMP_NUM_THREADS=1 / TOKENIZERS_PARALLELISM=false when a native thread pool is involved.",
)

FORK_IMPORT_FIX = (
    "The process was forked while another thread of its parent was importing a module: the copy holds that "
    "module's import lock for a thread it does not have. Finish the imports before forking (import the module "
    "at the top, before starting threads that import), or start the processes with 'spawn' or 'forkserver' "
    "(multiprocessing.set_start_method('spawn')), which begin without the parent's held locks.",
)

# distributed
PEER_FIX = (
    "Fix what the culprit rank is doing at the location shown; the other ranks only wait for it.",
    "Every rank must call every collective in the same order: no barrier, checkpoint save or "
    "sync_dist log inside `if rank == 0:`.",
    "Uneven data per rank: DistributedSampler(drop_last=True) or the DDP join() context.",
    "Fail fast next time: init_process_group(timeout=timedelta(minutes=5)), TORCH_NCCL_DUMP_ON_TIMEOUT=1.",
)

# A process that waits on a pipe or socket whose other end only it holds (the graph's edge to itself), by resource.
SELF_WAIT_FIX = {
    "signal": (
        "Only a signal can end this wait (`signal.pause()`, `signal.sigwait()`, or a select or poll given no file and "
        "no timeout): wait "
        "on what the code means to wait for (an event, a child's exit, a file) with a timeout; where a signal is "
        "meant to end it, install its handler with `signal.signal` before the wait, and check that whoever sends it "
        "is alive.",
    ),
    "pipe": (
        "The reader holds the pipe's write end itself, so it never sees end of file: close its own copy (os.close(w) "
        "right after fork or Popen; Popen(close_fds=True); do not pass the write end to a child that outlives the "
        "writer).",
    ),
    "pipe_full": (
        "The writer holds the read end of the pipe it fills, so with its reader gone (or never reading) the write "
        "neither completes nor fails with EPIPE: close its own copy of the read end right after fork or Popen "
        "(Popen(close_fds=True)).",
        "If it is meant to read its own output, read it on another thread or let communicate() read it.",
    ),
    "queue": (
        "Only this process holds the write end of the multiprocessing queue it reads, so only it could put to it: "
        "the producer ended without a last item, or it puts to another queue. A queue made at a module's top level "
        "is made again in every process started with spawn (or forkserver): make it under "
        "`if __name__ == '__main__':` and pass it to the processes as an argument.",
        "Put a sentinel on every path of the producer (errors included), and bound the read: q.get(timeout=...).",
    ),
    "socket": (
        "Nothing but this process could write to the socket it waits on (an event loop's own wake-up socket, for "
        "example): what it awaits must come from its own code, and nothing sets it. Set the future or event on "
        "every path, errors included, and bound the wait: asyncio.wait_for(..., timeout=...).",
    ),
    "eventfd": (
        "Nothing but this process holds the eventfd it reads, so only its own code could write it (a notifier, a "
        "callback, a thread it never started or that ended first): write it on every path, errors included, and "
        "poll it with a timeout (select.select([fd], [], [], timeout)) so a missing write is an error, not a hang.",
    ),
    "socket_full": (
        "The writer is the only reader of the socket it fills: read it on another thread or task, or bound the "
        "write with a timeout (sock.settimeout).",
    ),
    "timerfd": (
        "Nothing but this process holds the timerfd it reads, so its timer (disarmed, or set past the job's bounds) "
        "is the only end of the read: arm it for the interval meant (timerfd_settime's it_value; 0 disarms it), "
        "and poll it together with what should end the wait sooner, with a timeout.",
    ),
    "epoll": (
        "The epoll it waits on watches no file: a file closed (or never registered) before the poll leaves the set "
        "empty, and only a signal could end a wait with no timeout. Unregister before closing, check the set is not "
        "empty before polling, and pass a timeout (selector.select(timeout=...)).",
    ),
}

# A wait whose own timeout ends past the job's bounds (an event loop's next timer far off).
LATE_TIMER_FIX = (
    "Its own timeout ends only after the job's bounds: the event loop's next timer is that far off (an asyncio.sleep, "
    "or a retry's backoff that grew without a cap). Cap the delay (min(2 ** attempt, 60)) and bound the whole retry "
    "with a deadline.",
)

# A thread holds the GIL through a blocking native call: no other thread of its process can run Python until it returns.
GIL_FIX = (
    "Release the GIL around the blocking call: in a C extension, wrap it in Py_BEGIN_ALLOW_THREADS / "
    "Py_END_ALLOW_THREADS; with ctypes, load the library with ctypes.CDLL (each call releases the GIL), not PyDLL.",
    "Give the call a timeout, or run it in a child process, so one stuck call cannot stop every thread of the job.",
)

# A wait whose only releaser (a thread of its own) sleeps past the job's bounds: the wait-for graph's long_sleep end.
LONG_SLEEP_FIX = (
    "What would end this wait sleeps first, on a timer that ends only after the job's bounds: a delay read in the "
    "wrong unit (seconds where milliseconds were meant) or a retry's back-off grown without a cap. Check the unit, "
    "cap the delay, and wait on an event set when the work is ready (with a timeout) rather than for a fixed time.",
)

# A ring of processes (or threads) each waiting on the next: the wait-for graph's cycle, named by no other cause.
CYCLE_FIX = (
    "Each waits on the next in a ring (the chain above): none can move until another does. Break the ring at one "
    "of them: take locks in one order everywhere; read (or answer) before writing or waiting; or do one of the waits "
    "on a thread of its own.",
    "Bound the waits (a timeout on the socket or the call, Connection.poll(timeout), select before a write), so a "
    "ring raises instead of holding the job.",
)
# A write blocks once the reader's buffer is full: where the ring goes through pipes or sockets.
FULL_BUFFER_FIX = (
    "A write to a pipe or a socket blocks once the other side's buffer is full (64 KiB for a pipe): send a large "
    "message only when the other side reads, or in pieces it acknowledges.",
)

STRAGGLER_FIX = (
    "Nothing is stuck: one rank works while the others wait for it. If that is expected (a download or a "
    "checkpoint on rank 0 before a barrier), give it room: --max-slow, or hangwatch.phase(name, timeout=...).",
    "Move the slow work out of the critical path: download or stage files before init_process_group, or on "
    "every rank's local disk.",
    "Make sure the others' wait is bounded: init_process_group(timeout=timedelta(minutes=...)) covers the barrier.",
)

SLEEPER_FIX = (
    "One rank sleeps or polls while the others wait in a collective: nothing computes. If the pause is meant (a "
    "cool-down, a wait for a file), make it shorter than the process group's timeout, or take it on every rank.",
    "A sleep whose length comes from a setting (seconds given in hours, a retry back-off that grew): check "
    "the value at the line shown.",
    "Make sure the others' wait is bounded: init_process_group(timeout=timedelta(minutes=...)) covers the barrier.",
)

RENDEZVOUS_FIX = (
    "Check that every rank was started: WORLD_SIZE ranks across all nodes (torchrun --nnodes/--nproc-per-node).",
    "Check MASTER_ADDR/MASTER_PORT (or --rdzv-endpoint) are the same everywhere and reachable from every node.",
    "A rank that crashed at startup never joins: read its log first.",
)

INPUT_FIX = (
    "Log in before the job starts, so it never asks: WANDB_API_KEY=... (or `wandb login` once, or WANDB_MODE=offline), "
    "HF_TOKEN=... (or `huggingface-cli login` once).",
    "Remove the breakpoint() / pdb.set_trace() / input() the job stopped at, or guard it.",
    "Run unattended jobs with `< /dev/null`, so a read of standard input fails at once instead of waiting.",
)

DEBUGGER_FIX = (
    "Remove the breakpoint() / pdb.set_trace() the job stopped at, or guard it (`if os.environ.get('DEBUG'):`).",
    "To debug one rank, keep that rank's output and input reachable: torch.distributed.breakpoint(rank=N) prompts "
    "on rank N's own output, which `torchrun --local-ranks-filter` or `--redirects` can hide.",
    "Run unattended jobs with `< /dev/null` and PYTHONBREAKPOINT=0, so no prompt can wait.",
)

BDB_QUIT_FIX = (
    "Debug the sample's code with num_workers=0 (it then runs in the main process, at the terminal), or, in a worker "
    "or child process, with a debugger that listens on a port (remote-pdb, debugpy): multiprocessing gives its "
    "children /dev/null for standard input.",
    DEBUGGER_FIX[0],
)

# engine
UNKNOWN_FIX = (
    "Read the stacks below: the main thread's innermost frame in your code is where the job is.",
    "Run `hangwatch inspect PID` again in a minute: a stack that has not moved confirms a hang.",
)

# io
NETWORK_FIX = (
    "Give the call a timeout (requests.get(url, timeout=30), socket.settimeout, urlopen(timeout=...)).",
    "Hugging Face downloads: HF_HUB_DOWNLOAD_TIMEOUT=60 and HF_HUB_ETAG_TIMEOUT=30; or download or cache the data "
    "before training (HF_HUB_OFFLINE=1 / HF_DATASETS_OFFLINE=1 once cached).",
    "Check the endpoint is reachable from this machine (DNS, proxy, firewall).",
)

ACCEPT_FIX = (
    "Check that every client that should connect was started and can reach this address (a rank on another node, a "
    "worker that crashed before connecting, a port or host mistyped on one side).",
    "Give the listening socket a timeout (socket.settimeout(600) before accept()), so a client that never comes "
    "raises instead of holding the job.",
)

DATAGRAM_FIX = (
    "Check that whatever should send to this address was started and is alive (a helper that exited before it sent: "
    "its error is in the output), and that it sends to this host and port.",
    "A datagram may be lost on the way: give the socket a timeout (socket.settimeout(...) before recvfrom()) and ask "
    "again, so a message that never comes raises instead of holding the job.",
)

STORAGE_FIX = (
    "Copy or stage the data on local disk (or /dev/shm) instead of reading it over the network filesystem.",
    "Check the storage: `dmesg | grep -i 'blocked for more than'`, the NFS/FUSE server, disk health.",
    "Fewer DataLoader workers against a metadata-heavy filesystem; DataLoader(timeout=...) to fail fast.",
)

# output
BUFFERED_FIX = (
    "PYTHONUNBUFFERED=1 in the job's environment, or start it with `python -u`.",
    "print(..., flush=True), or sys.stdout.reconfigure(line_buffering=True) at the top of the script.",
    "Under Slurm: `srun --unbuffered`.",
)

# process
# A child with no Python stack (unzip, git, ssh, apt) asks on the job's terminal.
NATIVE_INPUT_FIX = (
    "Start the child with stdin=subprocess.DEVNULL, so a question it asks fails at once instead of waiting "
    "(subprocess.run(cmd, stdin=subprocess.DEVNULL)).",
    "Give it its answer up front: its batch flag (unzip -o, apt-get -y, ssh -o BatchMode=yes), or the environment "
    "that stops its prompt (GIT_TERMINAL_PROMPT=0, a token in GIT_ASKPASS or a credential helper).",
    "Bound the wait: subprocess.run(..., timeout=600) raises where the child never ends.",
)

# A child reads a pty whose master only a process of the job holds (pexpect, pty.spawn): that process must answer.
CHILD_INPUT_FIX = (
    "The child asks on a pseudo-terminal whose master only a process of the job holds, and that process does not "
    "answer: send what it asks for before waiting for it (pexpect's expect() then sendline()), give it its answer "
    "up front (a token in its environment, a batch flag), or bound the wait (expect(..., timeout=60)).",
)

# The child waited for writes into a pipe or a pty whose other end only its waiting parent holds.
CHILD_OUTPUT_FIX = (
    "The parent waits for a child whose output it never reads: read while the child runs, then wait "
    "(Popen.communicate(), or a thread draining stdout and stderr; on a pty, read the master to EOF, as pexpect's "
    "expect(EOF) does), or send the output to a file or DEVNULL.",
)

CHILD_STDIN_FIX = (
    "The child reads a pipe whose write end only the waiting parent holds: write what it waits for and flush it "
    "before waiting for its answer (proc.stdin.flush() after each command, or bufsize=1 with text=True), or close "
    "the child's stdin when there is no more to send (proc.stdin.close(), or Popen.communicate(input)).",
)

CHILD_WAIT_FIX = (
    "Look at the child process shown: it is what the job waits for.",
    "Pass timeout= to subprocess.run/Popen.wait/Process.join so a stuck child raises.",
    "For multiprocessing.Queue: get() the child's results before join(); a child cannot exit while its "
    "queue holds unread data.",
)

PIPE_WAIT_FIX = (
    "Look at the process shown holding the pipe's write end: the read ends when it writes or closes it.",
    "Close your own copy of a pipe's write end after starting the writer (subprocess does this; os.pipe with "
    "fork does not), or the read never sees the end of the data.",
    "Read with a timeout (select/poll, or communicate(timeout=...)) so a writer that never writes raises.",
)

# A poll of a pidfd (os.pidfd_open): only the exit of the process it refers to ends it.
PIDFD_WAIT_FIX = (
    "Look at the process shown: only its exit ends a poll of its pidfd.",
    "Poll with a timeout (`select.select([pidfd], [], [], 600)`) and decide what to do with a process that does not "
    "exit: signal it (`signal.pidfd_send_signal`), or raise.",
)

SOCKET_WAIT_FIX = (
    "Look at the process shown holding the socket's other end: the read ends when it answers, or when it closes "
    "the connection or exits.",
    "Give the call a timeout (sock.settimeout(600), or the client library's own timeout), so a peer that never "
    "answers raises instead of holding the job.",
)

COMPUTING_FIX = (
    "Nothing is stuck: the loop advances. If it should print or checkpoint as it goes, check that it does "
    "(and with PYTHONUNBUFFERED=1 when its output goes to a file).",
    "If it is slower than expected, profile it: `py-spy top --pid PID`.",
)

# process
STOPPED_FIX = ("kill -CONT PID (or `fg` in the shell that suspended it); a debugger attached to it: detach.",)

LOST_WORK_FIX = (
    "multiprocessing.Pool never reports a worker that died with a task: its result never comes (nor does "
    "multiprocess's, the pool of HF datasets' map(num_proc=N) on older datasets, and of pathos). Use "
    "concurrent.futures.ProcessPoolExecutor, which raises BrokenProcessPool when a worker dies.",
    "Or bound the wait: pool.map_async(...).get(timeout=...) raises multiprocessing.TimeoutError instead of "
    "waiting forever.",
    "A worker killed by signal 9 was almost always the OOM killer (`dmesg | grep -i oom`): lower memory per "
    "worker (fewer processes, smaller chunks) or raise the memory limit.",
)

# The pool's result-handler thread ended on an exception raised in a callback of the user's (it runs them).
POOL_CALLBACK_FIX = (
    "A callback or error_callback given to apply_async or map_async runs in the pool's result-handler thread, and "
    "an exception in it ends that thread: catch every exception inside the callback, or take "
    "the results with get() and handle them in the caller.",
)

MAIN_GUARD_FIX = (
    'Put the code that starts processes under `if __name__ == "__main__":` (the script\'s top level only defines '
    "functions and constants): spawn and forkserver import the main script again in every worker.",
    "Or bound the wait: pool.map_async(...).get(timeout=...) raises multiprocessing.TimeoutError instead of waiting "
    "forever.",
)

QUEUE_PICKLE_FIX = (
    "Put only what pickles on a multiprocessing.Queue (no locks, open files, sockets or generators; send a path or "
    "the plain data instead): its feeder thread prints the error and drops the item, and get() waits for it for ever.",
)

EXCEPTION_PICKLE_FIX = (
    "Make the exception class a worker raises rebuildable: pass every argument of its __init__ on to "
    "super().__init__(...) (pickle rebuilds an exception from its args), or give it a __reduce__: the pool's "
    "result handler dies rebuilding it in the main process, and the call that waits never returns (CPython gh-79492).",
)

INITIALIZER_FIX = (
    "Fix the error the pool's initializer raises, at the line named: multiprocessing.Pool starts a new worker for each "
    "one that dies there, for ever, and never fails the call that waits (CPython gh-87472).",
    "Or make the initializer catch its own error and leave the worker usable, or check what it needs before the pool "
    "starts; bound the wait: pool.map_async(...).get(timeout=...) raises multiprocessing.TimeoutError.",
)

POOL_HANDLER_FIX = (
    "Do not return tensors from multiprocessing.Pool workers that exit after their task (maxtasksperchild): "
    "return numpy arrays or lists (`t.numpy()`), or call "
    "torch.multiprocessing.set_sharing_strategy('file_system') before the pool starts.",
    "Bound the wait: pool.map_async(...).get(timeout=...) raises multiprocessing.TimeoutError instead of waiting "
    "forever.",
)

# locks
LOCK_WAIT_FIX = (
    "Look at the lock's holder shown: it is what the job waits for; end it (outside the job: its owner decides) or "
    "remove a stale lock file.",
    "Acquire with a timeout (FileLock(path, timeout=...), lock.acquire(timeout=...)) so a wait that cannot end raises.",
)

# distributed transport
COLLECTIVE_STALLED_FIX = (
    "Every rank entered the collective and none completed it: the transport stalled, not the code. Check the "
    "network and the devices: NCCL_DEBUG=INFO, `nvidia-smi`, the NICs' errors, `dmesg`.",
    "Fail fast next time: init_process_group(timeout=timedelta(minutes=5)); TORCH_NCCL_ASYNC_ERROR_HANDLING=1.",
    "Restart from the last checkpoint; if it repeats on one node, drain that node.",
)

GPU_HARDWARE_FIX = (
    "The GPU or its driver failed: end the job, drain or reboot the node (`nvidia-smi -r` where allowed), "
    "exclude the device, and restart from the last checkpoint.",
    "Check it: `nvidia-smi -q` (ECC, retired pages, remapped rows) and `dmesg | grep -i xid`.",
)

GPU_APP_FAULT_FIX = (
    "A kernel of the job faulted on the GPU: run once with CUDA_LAUNCH_BLOCKING=1 (and "
    "`compute-sanitizer`) to see the real failing call; out-of-range indices in embeddings or losses are "
    "the usual cause.",
    "The context is dead after such a fault: end the job and restart it from the last checkpoint.",
)

AMDGPU_FIX = (
    "ROCm: forked DataLoader workers can hang once the HIP runtime is up: "
    "DataLoader(multiprocessing_context='spawn') or num_workers=0.",
    "HSA_ENABLE_INTERRUPT=0 against lost completion interrupts; boot with `iommu=pt`; update the amdgpu driver and "
    "ROCm.",
    "Check `dmesg | grep -i amdgpu` for ring timeouts and resets; restart from the last checkpoint.",
)

SILENT_STALL_FIX = (
    "A GPU at 100% with power near idle runs one kernel that spins: a kernel waiting on a flag another rank "
    "or stream never sets, or one block working alone. If it outlives --max-slow, end the job, reset or drain "
    "the GPU, and restart from the last checkpoint.",
    "If it repeats on one node, exclude that GPU; check `nvidia-smi -q` and `dmesg | grep -i xid`.",
)

LONG_KERNEL_FIX = (
    "The GPU is computing: a long kernel (a huge batch, an attention over a long sequence, a first "
    "compile's autotuning). Give it time, or raise --min-stall for this job.",
    "If it never ends, look at the op the main thread waits on (its Python line is shown) and at "
    "`nvidia-smi` for the GPU's power draw.",
)

NFS_FIX = (
    "The network filesystem server stopped answering: check it (`dmesg | grep nfs`, the server's health); "
    "the job resumes by itself if it comes back (a hard mount waits forever).",
    "Stage the data on local disk; mount with `soft,timeo=` only where a read error is better than a wait.",
)

GPU_RELEASE_FIX = (
    "The killed job's GPU memory was not freed: a process still holds the context (a zombie, or a worker "
    "stuck in the driver). Find it: `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` "
    "or `fuser -v /dev/nvidia*`, and end it.",
    "If no process is left, reset the GPU (`nvidia-smi -r -i N`, idle GPU only) or reboot the node; then "
    "restart (hangwatch run --relaunch-on-held-gpu relaunches anyway).",
)

# A send and a receive between the same two ranks whose tags differ: each waits for the call with its own tag.
P2P_TAG_FIX = (
    "A send completes only on a receive with the same tag: between two ranks, post the tagged sends and receives "
    "in the same order on both sides (or receive first the tag the peer sends first).",
)

GROUP_FIX = (
    "Every member of a group must have made the same groups before it, in one order: torch names a group by how "
    "many groups the rank has made so far (hashed with its members under use_local_synchronization=True), so a "
    "group made on some ranks only (`if rank == 0: dist.new_group([0])`) gives every later group another name on "
    "those ranks, and its members wait for each other under names that differ.",
    "Make every group on every rank, in the same order, at setup before any rank branches (new_group must be called "
    "by every rank of the job, members or not, unless use_local_synchronization=True).",
    "Fail fast next time: init_process_group(timeout=timedelta(minutes=5)).",
)

P2P_FIX = (
    "Pair every send with a receive the peer has already posted: on a pipeline's boundary, one side receives first "
    "(even stages send then receive, odd stages receive then send).",
    "Or post both directions at once: dist.batch_isend_irecv([P2POp(dist.isend, ...), P2POp(dist.irecv, ...)]) "
    "and wait on every request.",
    "Fail fast next time: init_process_group(timeout=timedelta(minutes=5)).",
)

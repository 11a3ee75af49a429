"""A process the job started waits on a lock it already holds, for ever; the job waits for it with a timeout of its
own, then ends it and goes on. `python child_ended_by_its_parents_timeout.py SECONDS KIND`: after SECONDS the job
gives up, ends the process and exits 0. KIND `future`: a ProcessPoolExecutor task, `future.result(timeout=...)`;
`socket`: a forked child keeps the other end of a socket pair, `settimeout` and `recv`; `poll`: `Popen.poll()` every
0.5 s until a deadline, then `kill()`; `timer`: `Popen.wait()` with no timeout, while `threading.Timer(SECONDS,
child.kill)` runs; `watchdog`: the same, while a thread polls the child until a deadline, then kills it; `asyncio`:
`asyncio.wait_for(proc.wait(), SECONDS)`, then `kill()`; `select`: `select.select()` on its stdout, which it never
writes, with a timeout, then `kill()`; `count`: `Popen.poll()` every 0.5 s for a number of turns (`for _ in
range(turns)`, in a function), then `kill()`; `retries`: the same, counted (`tries += 1`, `if tries >=
POLLS_PER_SECOND * seconds: kill(); break`, a module's constant); `alias`: the poll until a deadline read through a
clock of another name (`from time import monotonic as now`); `thread`: `Popen.wait()` with no timeout, while a plain thread waits on an Event
with a timeout, then kills it; `attribute`: the same, while a watchdog thread's class counts its turns in attributes
(`while not self.stopped.wait(0.5)`, `self.ticks += 1`, `if self.ticks > self.limit`), which no read of locals shows. `python child_ended_by_its_parents_timeout.py hang KIND`: the same wait with no timeout
(the poll with no deadline and no count, no Timer, no watchdog, no thread, no class)."""

import asyncio
import concurrent.futures
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from time import monotonic as now

LOCKED = "import threading; lock = threading.Lock(); lock.acquire(); lock.acquire()"


def task() -> None:
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()  # HANG-TASK


def watchdog(child: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while child.poll() is None:
        if time.monotonic() > deadline:
            print("skipped: the watchdog ends the child", flush=True)
            child.kill()
            break
        time.sleep(0.5)


def guard(child: subprocess.Popen, seconds: float) -> None:
    if not threading.Event().wait(seconds):
        print("skipped: the guard ends the child", flush=True)
        child.kill()


class Watchdog(threading.Thread):
    def __init__(self, child: subprocess.Popen, seconds: float) -> None:
        super().__init__(daemon=True)
        self.child, self.limit, self.ticks = child, seconds * 2, 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.5):
            self.ticks += 1
            if self.ticks > self.limit:
                print("skipped: the watchdog's count ends the child", flush=True)
                self.child.kill()
                return


POLLS_PER_SECOND = 2  # (a module's constant: no read of locals shows it)


def poll_with_retries(child: subprocess.Popen, seconds: float) -> None:
    tries = 0
    while child.poll() is None:
        if tries >= POLLS_PER_SECOND * seconds:
            print("skipped: the child is still running", flush=True)
            child.kill()
            child.wait(timeout=10)
            break
        tries += 1
        time.sleep(0.5)


def poll_for_turns(child: subprocess.Popen, turns: int) -> None:
    for _ in range(turns):
        if child.poll() is not None:
            return
        time.sleep(0.5)
    print("skipped: the child is still running", flush=True)
    child.kill()
    child.wait(timeout=10)


async def wait_for_child(seconds: float | None) -> None:
    proc = await asyncio.create_subprocess_exec(sys.executable, __file__, "child")
    try:
        await asyncio.wait_for(proc.wait(), seconds)
    except asyncio.TimeoutError:
        print("skipped: the child timed out", flush=True)
        proc.kill()
        await proc.wait()


if __name__ == "__main__" and sys.argv[1] == "child":
    task()
elif __name__ == "__main__":
    seconds = None if sys.argv[1] == "hang" else float(sys.argv[1])
    kind = sys.argv[2]
    if kind in ("timer", "watchdog", "thread", "attribute"):
        child = subprocess.Popen([sys.executable, __file__, "child"])
        if seconds is not None and kind == "attribute":
            Watchdog(child, seconds).start()
        elif seconds is not None and kind == "thread":
            threading.Thread(target=guard, args=(child, seconds), daemon=True).start()
        elif seconds is not None and kind == "timer":
            threading.Timer(
                seconds, lambda: (print("skipped: the timer ends the child", flush=True), child.kill())
            ).start()
        elif seconds is not None:
            threading.Thread(target=watchdog, args=(child, seconds), daemon=True).start()
        child.wait()
    elif kind == "select":
        child = subprocess.Popen([sys.executable, __file__, "child"], stdout=subprocess.PIPE)
        ready, _, _ = select.select([child.stdout], [], [], *(() if seconds is None else (seconds,)))
        print("skipped: the child said nothing in time", flush=True)
        child.kill()
        child.wait(timeout=10)
    elif kind == "asyncio":
        asyncio.run(wait_for_child(seconds))
    elif kind == "future":
        pool = concurrent.futures.ProcessPoolExecutor(1)
        future = pool.submit(task)
        try:
            future.result(timeout=seconds)
        except concurrent.futures.TimeoutError:
            print("skipped: the task timed out", flush=True)
            for p in list(pool._processes.values()):  # (the executor cannot cancel a running task)
                p.kill()
            pool.shutdown(wait=True, cancel_futures=True)
    elif kind == "socket":
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            ours.close()
            task()
        theirs.close()
        ours.settimeout(seconds)
        try:
            ours.recv(16)
        except TimeoutError:
            print("skipped: no answer in time", flush=True)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    else:
        child = subprocess.Popen([sys.executable, "-c", LOCKED])
        if seconds is None:
            while child.poll() is None:
                time.sleep(0.5)  # HANG-POLL
        elif kind == "count":
            poll_for_turns(child, int(seconds * 2))
        elif kind == "retries":
            poll_with_retries(child, seconds)
        elif kind == "alias":
            deadline = now() + seconds
            while child.poll() is None:
                if now() > deadline:
                    print("skipped: the child is still running", flush=True)
                    child.kill()
                    child.wait(timeout=10)
                    break
                time.sleep(0.5)
        else:
            deadline = time.monotonic() + seconds
            while child.poll() is None:
                if time.monotonic() > deadline:
                    print("skipped: the child is still running", flush=True)
                    child.kill()
                    child.wait(timeout=10)
                    break
                time.sleep(0.5)
    print("done", flush=True)

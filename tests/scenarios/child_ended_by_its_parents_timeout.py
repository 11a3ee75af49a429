"""A process the job started waits on a lock it already holds, for ever; the job waits for it with a timeout of its
own, then ends it and goes on. `python child_ended_by_its_parents_timeout.py SECONDS KIND`: after SECONDS the job
gives up, ends the process and exits 0. KIND `future`: a ProcessPoolExecutor task, `future.result(timeout=...)`;
`socket`: a forked child keeps the other end of a socket pair, `settimeout` and `recv`; `poll`: `Popen.poll()` every
0.5 s until a deadline, then `kill()`. `python child_ended_by_its_parents_timeout.py hang KIND`: the same wait with
no timeout (the poll with no deadline)."""

import concurrent.futures
import os
import signal
import socket
import subprocess
import sys
import threading
import time

LOCKED = "import threading; lock = threading.Lock(); lock.acquire(); lock.acquire()"


def task() -> None:
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()  # HANG-TASK


if __name__ == "__main__":
    seconds = None if sys.argv[1] == "hang" else float(sys.argv[1])
    kind = sys.argv[2]
    if kind == "future":
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
        deadline = time.monotonic() + (seconds or 0)
        while child.poll() is None:
            if time.monotonic() > deadline:
                print("skipped: the child is still running", flush=True)
                child.kill()
                child.wait(timeout=10)
                break
            time.sleep(0.5)
    print("done", flush=True)

"""subprocess.run with a preexec_fn that takes a lock a thread held when the child was forked: the child never execs.

report: https://github.com/intel/gprofiler/issues/931
saw: the profiler hung in subprocess.run; the forked child was stuck in preexec_fn before exec.
mechanism: preexec_fn runs in the forked child, which has only the forking thread; a threading.Lock that another thread held at the fork is held for ever in the child's copy, and the parent waits for the child's exec status.
expect: hung fork.inherited_lock
accept: child.wait, process.waits_on
"""
import subprocess
import threading
import time

from _zoo import ready

manifest_lock = threading.Lock()
held = threading.Event()


def uploader():  # rewrites the run manifest and uploads it, under the lock
    while True:
        with manifest_lock:
            held.set()
            time.sleep(2)
        time.sleep(0.01)


def record_child():  # preexec_fn: runs in the forked child, before exec
    with manifest_lock:  # HANG-HERE (a copy of a lock that the uploader held at fork: nobody in the child releases it)
        pass


if __name__ == "__main__":
    threading.Thread(target=uploader, name="uploader", daemon=True).start()
    held.wait()
    ready()
    rev = subprocess.run(["git", "--version"], capture_output=True, text=True, preexec_fn=record_child).stdout
    print("code version:", rev, flush=True)

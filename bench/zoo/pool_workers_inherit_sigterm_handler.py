"""The trainer's graceful-preemption SIGTERM handler is inherited by its forked Pool workers: leaving `with Pool` waits forever.

report: https://github.com/SpaceCowMedia/commander-spellbook-backend/pull/1204
also: https://github.com/python/cpython/issues/78178 ("multiprocessing Pool hangs in terminate()")
saw: a SIGTERM "shutting down gracefully" handler installed process-wide before the pool forked; leaving the `with Pool` block "wedges the parent forever in the join at the end of Pool.terminate()" when a task is in flight.
mechanism: Pool.__exit__ calls terminate(): it takes the task queue's read lock for good, then sends SIGTERM to the workers and joins them. The forked workers run the inherited handler (print, set a flag) instead of dying, finish their task, and then wait for the read lock the parent holds: join() never returns.
expect: hung child.wait
accept: code.deadlock
"""
import ctypes
import multiprocessing as mp
import signal
import time

from _zoo import ready

stop_after_step = False


def on_sigterm(signum, frame):  # cluster preemption notice: finish the current step, checkpoint, exit cleanly
    global stop_after_step  # noqa: PLW0603 (the report's own shape)
    stop_after_step = True
    print(f"[{mp.current_process().name}] SIGTERM received: will stop after this step", flush=True)


def harness_die_with_parent():  # test harness only: a worker dies with its parent (PR_SET_PDEATHSIG)
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)


def evaluate(ckpt):  # score a checkpoint on the validation set
    time.sleep(2)
    return ckpt, 1.0 / (1 + ckpt)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_sigterm)
    for step in range(3):
        print(f"train step {step}", flush=True)
    with mp.Pool(2, initializer=harness_die_with_parent) as pool:  # HANG-HERE
        for ckpt, score in pool.imap_unordered(evaluate, range(8)):
            print(f"checkpoint {ckpt}: score {score:.3f}", flush=True)
            if score > 0.9:  # good enough: stop evaluating
                break
        ready()
    print("best checkpoint chosen", flush=True)

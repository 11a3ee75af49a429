"""The same preemption handler, but the pool's initializer restores SIGTERM's default in the workers; evaluation takes ~15 s.

report: https://github.com/SpaceCowMedia/commander-spellbook-backend/pull/1204
mechanism: the workers reset SIGTERM to SIG_DFL when they start, so terminate() at the end of the `with` block ends them. Before that, pool.map scores 8 checkpoints at ~3.7 s each on 2 workers: ~15 s with no output, then exit 0.
expect: healthy
"""
import ctypes
import multiprocessing as mp
import signal
import time

from _zoo import ready, seconds

stop_after_step = False


def on_sigterm(signum, frame):
    global stop_after_step  # noqa: PLW0603 (the report's own shape)
    stop_after_step = True
    print(f"[{mp.current_process().name}] SIGTERM received: will stop after this step", flush=True)


def worker_init():
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the trainer's handler is not the workers' business
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # test harness only: a worker dies with its parent


def evaluate(ckpt, s):
    deadline = time.monotonic() + s
    while time.monotonic() < deadline:
        time.sleep(0.25)
    return ckpt, 1.0 / (1 + ckpt)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_sigterm)
    for step in range(3):
        print(f"train step {step}", flush=True)
    with mp.Pool(2, initializer=worker_init) as pool:
        ready()
        scores = pool.starmap(evaluate, [(c, seconds(15) / 4) for c in range(8)])
    print("best checkpoint:", max(scores, key=lambda cs: cs[1]), flush=True)

"""A helper process that keeps a heartbeat for a while, then stops; the job waits for it at exit.

report: https://github.com/rwth-i6/returnn/issues/1497
saw: the atexit waitpid returned once the sub-process ended.
mechanism: healthy: the helper's loop has a deadline (`while time.monotonic() < deadline: time.sleep(...)`); the join returns when it passes.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds


def heartbeat_service(deadline_s):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        time.sleep(0.5)


if __name__ == "__main__":
    helper = mp.get_context("fork").Process(target=heartbeat_service, args=(seconds(30),), name="heartbeat")
    helper.start()
    print("training done", flush=True)
    ready()
    helper.join()

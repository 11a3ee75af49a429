"""A helper process whose loop has no way out: the finished job waits for it at exit, for ever.

report: https://github.com/rwth-i6/returnn/issues/1497
also: https://github.com/Red-Hat-AI-Innovation-Team/training_hub/pull/133
saw: "NonDaemonicSpawnProcess hangs at exit": the atexit handler sits in os.waitpid(self.proc_pid, 0) for a sub-process that never ends.
mechanism: the helper's last act is `while True: time.sleep(...)` (a keep-alive with no exit), so the parent's join, with no timeout, never returns.
expect: hung child.wait
"""
import multiprocessing as mp
import time

from _zoo import ready


def heartbeat_service():
    while True:
        time.sleep(0.5)  # HANG-HERE


if __name__ == "__main__":
    helper = mp.get_context("fork").Process(target=heartbeat_service, name="heartbeat")
    helper.start()
    print("training done", flush=True)
    ready()
    helper.join()

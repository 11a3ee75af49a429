"""A lock-order cycle hidden in logging: the uploader's log call formats the run state (taking its lock) inside the handler's lock.

report: https://github.com/storaged-project/blivet/issues/1500 (storaged-project/blivet#1500)
saw: "Deadlock between blivet_lock and logging handler lock due to @exclusive wrapping __str__ ... two locks acquired in
  opposite order: blivet_lock (global RLock) [and the] logging handler's self.lock".
mechanism: logging formats a record's arguments lazily, in Handler.emit(), while it holds the handler's lock. The
  uploader thread logs the RunState object, whose __repr__ takes RunState.lock: it holds the handler lock and waits for
  RunState.lock. The main thread saves a checkpoint holding RunState.lock and then logs: it waits for the handler lock.
diagnosis: hung, code.deadlock (a lock-order cycle between two threads): MainThread waits for the StreamHandler lock at
  logging_repr_lock_order_cycle.py:56 while holding RunState.lock (taken at logging_repr_lock_order_cycle.py:51); "uploader" holds the handler lock and waits for
  RunState.lock in __repr__ at logging_repr_lock_order_cycle.py:30, reached from its log call at logging_repr_lock_order_cycle.py:42.
expect: hung code.deadlock
"""
import logging
import sys
import threading
import time

from _zoo import ready

log = logging.getLogger("train")


class RunState:
    def __init__(self):
        self.lock = threading.Lock()  # guards step and checkpoint path
        self.step, self.ckpt = 0, None

    def __repr__(self):
        with self.lock:  # HANG-HERE
            return f"RunState(step={self.step}, ckpt={self.ckpt})"


state = RunState()
saving = threading.Event()


def uploader():  # mirrors each new checkpoint to object storage
    while True:
        saving.wait()
        saving.clear()
        log.info("uploader: syncing %s", state)  # formatted later, inside the handler's lock


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(threadName)s %(message)s")
    threading.Thread(target=uploader, name="uploader", daemon=True).start()
    for step in range(1, 10):
        log.info("step %d loss %.3f", step, 1.0 / step)
        if step % 3 == 0:
            with state.lock:
                state.step, state.ckpt = step, f"ckpt-{step}.pt"
                saving.set()
                time.sleep(0.5)  # write the checkpoint
                ready()
                log.info("checkpoint %s written", state.ckpt)  # HANG-HERE

"""Look-alike of logging_repr_lock_order_cycle: the uploader renders the run state before it logs, so it waits for RunState.lock outside logging; the save takes ~15 s.

report: https://github.com/storaged-project/blivet/issues/1500 (storaged-project/blivet#1500: format outside the handler lock)
mechanism: the uploader calls repr(state) itself, then logs a plain string: it waits for RunState.lock holding no
  other lock. The main thread holds RunState.lock for ~15 s while it writes a large checkpoint (asleep in pieces, no
  output), then logs and releases it; the uploader then logs too, and the run finishes.
diagnosis: healthy: a lock wait on a thread that is working and releases the lock.
expect: healthy
"""
import logging
import sys
import threading
import time

from _zoo import ready, seconds

log = logging.getLogger("train")


class RunState:
    def __init__(self):
        self.lock = threading.Lock()
        self.step, self.ckpt = 0, None

    def __repr__(self):
        with self.lock:
            return f"RunState(step={self.step}, ckpt={self.ckpt})"


state = RunState()
saving = threading.Event()


def uploader():
    while True:
        saving.wait()
        saving.clear()
        desc = repr(state)  # waits for the save to finish, holding nothing else
        log.info("uploader: syncing %s", desc)


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(threadName)s %(message)s")
    up = threading.Thread(target=uploader, name="uploader", daemon=True)
    up.start()
    for step in range(1, 5):
        log.info("step %d loss %.3f", step, 1.0 / step)
        if step == 3:
            with state.lock:
                state.step, state.ckpt = step, f"ckpt-{step}.pt"
                saving.set()
                ready()
                deadline = time.monotonic() + seconds(15)  # write a large checkpoint
                while time.monotonic() < deadline:
                    time.sleep(0.5)
                log.info("checkpoint %s written", state.ckpt)
    time.sleep(0.5)  # let the uploader report

"""A lock-order ring hidden in logging (storaged-project/blivet#1500): logging formats a record's arguments in
Handler.emit(), inside the handler's lock. The uploader thread logs the run state, whose __repr__ takes the state's
lock: it holds the handler's lock and waits for the state's. Main saves a checkpoint holding the state's lock, then
logs: it waits for the handler's. Every thread of the process then waits, with no timeout, on a lock another holds.
`python logging_repr_lock_order.py hang`: so for ever.
`python logging_repr_lock_order.py SECONDS`: the uploader formats the state before it logs (holding nothing), and
main writes its checkpoint for SECONDS (asleep in pieces) holding the state's lock: the job ends with `done`."""

import logging
import sys
import threading
import time

log = logging.getLogger("train")
HANG = sys.argv[1:] == ["hang"]


class RunState:
    def __init__(self) -> None:
        self.lock = threading.Lock()  # guards step and checkpoint path
        self.step, self.ckpt = 0, ""

    def __repr__(self) -> str:
        with self.lock:  # the uploader waits here, holding the handler's lock
            return f"RunState(step={self.step}, ckpt={self.ckpt})"


state = RunState()
saving = threading.Event()


def uploader() -> None:
    while True:
        saving.wait()
        saving.clear()
        if HANG:
            log.info("uploader: syncing %s", state)  # formatted later, inside the handler's lock
        else:
            log.info("uploader: syncing %s", repr(state))  # formatted first, holding nothing


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(threadName)s %(message)s")
    threading.Thread(target=uploader, name="uploader", daemon=True).start()
    for step in range(1, 5):
        log.info("step %d", step)
        if step == 3:
            with state.lock:
                state.step, state.ckpt = step, f"ckpt-{step}.pt"
                saving.set()
                end = time.monotonic() + (0.5 if HANG else float(sys.argv[1]))  # write the checkpoint
                while time.monotonic() < end:
                    time.sleep(0.25)
                log.info("checkpoint %s written", state.ckpt)  # HANG-HERE
    time.sleep(0.5)  # let the uploader report
    print("done", flush=True)

"""The QueueListener is started once; at stop() it drains ~15 s of records into a slow log shipper.

report: https://github.com/python/cpython/issues/132106
mechanism: setup_logging() starts the listener only once. The records go to a shipper handler that takes ~1.5 s per record (a remote log service); stop() enqueues the sentinel behind 10 pending records and joins the listener thread, which ships them (silent, alive, making progress) and then exits.
expect: healthy
"""
import logging
import logging.handlers
import os
import queue
import tempfile
import time

from _zoo import ready, seconds

log_queue = queue.Queue(-1)
listener = None
log = logging.getLogger("train")


class Shipper(logging.Handler):  # sends each record to a remote log service (here: a file, slowly)
    def __init__(self, path):
        super().__init__()
        self.path = path

    def emit(self, record):
        deadline = time.monotonic() + seconds(15) / 10
        while time.monotonic() < deadline:
            time.sleep(0.25)
        with open(self.path, "a") as f:
            f.write(self.format(record) + "\n")


def setup_logging():
    global listener  # noqa: PLW0603 (the report's own shape)
    if listener is None:
        listener = logging.handlers.QueueListener(log_queue, Shipper(os.path.join(tempfile.mkdtemp(), "ship.log")))
        logging.getLogger().addHandler(logging.handlers.QueueHandler(log_queue))
        logging.getLogger().setLevel(logging.INFO)
        listener.start()


if __name__ == "__main__":
    setup_logging()
    weights = [1.0] * 8
    for step in range(10):
        weights = [w * 0.9 for w in weights]
        print(f"step {step} loss {sum(weights):.3f}", flush=True)
        log.info("step %d loss %.3f", step, sum(weights))
    setup_logging()
    ready()
    listener.stop()  # drains the pending records, then returns

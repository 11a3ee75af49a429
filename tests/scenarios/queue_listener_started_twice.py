"""A logging QueueListener started twice (setup_logging() called by main and again by an evaluation helper): each
start() starts a thread and keeps only the last, and stop() puts one sentinel and joins that last thread; the first
thread takes the sentinel and exits, the joined one waits on the empty queue (python/cpython#132106). Every thread of
the process then waits, with no timeout, on a primitive private to it: main in the join, the listener in the queue's
get, neither a frame of the user's. `python queue_listener_started_twice.py hang`: so for ever.
`python queue_listener_started_twice.py SECONDS`: a watchdog thread sleeps SECONDS (the kernel shows its timer), then
puts a second sentinel: the join returns and the job ends with `done`."""

import logging
import logging.handlers
import queue
import sys
import threading
import time

log_queue: queue.Queue = queue.Queue(-1)
listener = logging.handlers.QueueListener(log_queue, logging.StreamHandler(sys.stdout))
logging.getLogger().addHandler(logging.handlers.QueueHandler(log_queue))
logging.getLogger().setLevel(logging.INFO)


def setup_logging() -> None:
    listener.start()  # "idempotent", but it starts a listener thread on every call


def watchdog(seconds: float) -> None:
    time.sleep(seconds)  # asleep on a timer, not in a futex: this thread runs again
    listener.enqueue_sentinel()


setup_logging()
for step in range(3):
    logging.getLogger("train").info("step %d", step)
deadline = time.monotonic() + 10  # the first listener waits on the queue before the second starts: it is the one the
while len(log_queue.not_empty._waiters) < 1 and time.monotonic() < deadline:  # sentinel wakes (a Condition's waiters
    time.sleep(0.01)  # are woken first in, first out), so the joined one waits for ever
setup_logging()  # the evaluation helper's call
if sys.argv[1] != "hang":
    threading.Thread(target=watchdog, args=(float(sys.argv[1]),), name="watchdog", daemon=True).start()
listener.stop()  # HANG-HERE
print("done", flush=True)

"""The same finalizer logging inside put(), through a handler whose SimpleQueue put is reentrant: nothing waits.

report: https://github.com/getsentry/sentry-python/issues/803
saw: the fix the report points to: queue.SimpleQueue's put() "can be interrupted by another put() call in the same thread without deadlocking".
mechanism: healthy: the log record goes to a SimpleQueue; the shipping thread then takes a while per batch while main waits in join().
expect: healthy
"""
import logging
import logging.handlers
import queue
import threading
import time

from _zoo import ready, seconds


class Record:
    def __init__(self, text, batch=None):
        self.text, self.batch = text, batch


class Outbox(queue.Queue):
    def _put(self, item):
        item.batch = None  # the batch's last reference goes here, under the mutex: its finalizer logs
        super()._put(item)


outbox = Outbox()
log_records = queue.SimpleQueue()


class Batch:
    def __del__(self):
        logging.getLogger("trainer").warning("batch buffer released")


def ship():
    while True:
        record = outbox.get()
        time.sleep(seconds(20))  # the upload of this batch's metrics
        print("shipped", record.text, flush=True)
        outbox.task_done()


if __name__ == "__main__":
    logging.getLogger("trainer").addHandler(logging.handlers.QueueHandler(log_records))
    threading.Thread(target=ship, daemon=True).start()
    ready()
    outbox.put(Record("step 1 metrics", Batch()))
    outbox.join()
    print("log records:", log_records.qsize(), flush=True)

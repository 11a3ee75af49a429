"""A finalizer that logs, run inside Queue.put, whose log handler puts to the same queue: the thread waits on itself.

report: https://github.com/getsentry/sentry-python/issues/803
also: https://github.com/itamarst/crochet/issues/25
saw: "Deadlock (Hangs) during Garbage Collection because of logging in destructor and lock on Queue".
mechanism: queue.Queue's mutex is a plain Lock; a __del__ run while put() holds it logs, and the logging handler calls put() on the same queue from the same thread, which waits for the lock it already holds. The consumer thread waits on the queue's condition meanwhile.
expect: hung code.deadlock
"""
import logging
import queue
import threading

from _zoo import ready


class Record:
    def __init__(self, text, batch=None):
        self.text, self.batch = text, batch


class Outbox(queue.Queue):
    def _put(self, item):
        item.batch = None  # the queue keeps the text only: the batch's last reference goes here, under the mutex
        super()._put(item)


outbox = Outbox()


class OutboxHandler(logging.Handler):
    def emit(self, record):
        outbox.put(Record(self.format(record)))  # HANG-HERE


class Batch:
    def __del__(self):
        logging.getLogger("trainer").warning("batch buffer released")


def ship():
    while True:
        print("shipped", outbox.get().text, flush=True)


if __name__ == "__main__":
    logging.getLogger("trainer").addHandler(OutboxHandler())
    threading.Thread(target=ship, daemon=True).start()
    ready()
    outbox.put(Record("step 1 metrics", Batch()))
    print("never", flush=True)

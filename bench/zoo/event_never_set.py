"""A thread that should set an Event dies on an exception; the waiter has no timeout.

report: https://github.com/Flexget/Flexget/pull/5192
saw: run_job() waited on each task's finished_event with no timeout; a dead queue never sets that event.
mechanism: the only thread that would set() the Event died; nothing left in the process can set it.
expect: hung code.deadlock
"""
import threading

from _zoo import ready

finished = threading.Event()


def upload_checkpoint():
    raise RuntimeError("bucket not found")  # dies before finished.set()


if __name__ == "__main__":
    threading.Thread(target=upload_checkpoint, name="uploader").start()
    ready()
    finished.wait()  # HANG-HERE
    print("uploaded", flush=True)

"""queue.join() with a consumer that never calls task_done(): validation waits forever.

report: https://github.com/Rikorose/DeepFilterNet/issues/236
also: https://github.com/Rikorose/DeepFilterNet/pull/245
saw: "training loop hangs during validation ... training stopped progressing eleven hours before I returned".
mechanism: self.data_queue.get() without a later task_done() makes data_queue.join() wait for a count that never reaches zero.
expect: hung code.deadlock
"""
import queue
import threading

from _zoo import ready

data_queue: queue.Queue = queue.Queue()


def loader():
    while True:
        data_queue.get()  # forgets task_done()


if __name__ == "__main__":
    threading.Thread(target=loader, daemon=True, name="loader").start()
    for batch in range(4):
        data_queue.put(batch)
    print("validation: waiting for the loader to drain", flush=True)
    ready()
    data_queue.join()  # HANG-HERE

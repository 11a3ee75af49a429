"""At exit, a telemetry log handler's own atexit hook stops its export worker; a later hook logs once more, and logging.shutdown's flush waits for the dead worker.

report: https://github.com/census-instrumentation/opencensus-python/pull/1112
also: https://github.com/census-instrumentation/opencensus-python/issues/881 ("Python session does not exit() because AzureLogHandler thread somehow blocks it": a log call in an atexit function)
saw: "Currently `flush()` deadlocks during process termination if there's any unsent messages in the queue. This is because `atexit` first calls `handler.close()` and then `logging.shutdown()`, that in turn calls `handler.flush()` ... `handler.close()` kills the worker, and then `handler.flush()` forever waits for the dead worker to send the messages from the queue." (py-spy: MainThread in wait <- flush <- shutdown)
mechanism: atexit runs its hooks last-registered first: the handler (made after `import logging` and after the tracker registered its run-summary hook) is closed first, and its close() stops the export worker thread; the tracker's hook then logs the run summary, which the still-attached (closed) handler queues; logging.shutdown, registered first and run last, calls flush(), which queues a flush marker and waits on its Event with no timeout. The only thread that would set it has exited.
expect: hung code.deadlock
"""
import atexit
import logging
import queue
import sys
import threading
import time

from _zoo import ready

log = logging.getLogger("train")
_STOP = object()


class TelemetryLogHandler(logging.Handler):
    """Queues records; an export worker thread sends them to the telemetry service in batches."""

    def __init__(self):
        super().__init__()
        self._queue = queue.Queue()
        self._worker = threading.Thread(target=self._export, name="AzureLogHandlerWorker", daemon=True)
        self._worker.start()
        atexit.register(self.close)  # runs before logging.shutdown, which was registered at `import logging`

    def emit(self, record):
        self._queue.put(self.format(record))

    def flush(self):
        if self._queue.empty():
            return
        done = threading.Event()
        self._queue.put(done)
        done.wait()  # HANG-HERE

    def close(self):
        self._queue.put(_STOP)
        self._worker.join()
        super().close()

    def _export(self):
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            time.sleep(0.01)  # the POST to the ingestion endpoint


METRICS = [f"eval/{task}_{m}" for task in ("arc", "boolq", "hellaswag", "mmlu", "piqa", "siqa", "wino") for m in ("acc", "acc_norm", "stderr")]


def run_summary():  # a tracker's exit hook, registered when it was imported: one line per metric
    for i, name in enumerate(METRICS):
        log.info("summary %s = %.4f", name, 0.5 + i / 100)  # queued: the export worker has already stopped
    ready()


if __name__ == "__main__":
    atexit.register(run_summary)  # `import tracker`
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
    logging.getLogger().addHandler(TelemetryLogHandler())
    for step in range(20):
        time.sleep(0.05)  # a training step
        log.info("step %d loss %.4f", step, 1.0 / (step + 1))
    print("training done", flush=True)

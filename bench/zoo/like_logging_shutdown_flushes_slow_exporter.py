"""At exit, logging.shutdown flushes a telemetry log handler whose export worker is still sending a backlog to a slow service: the job lingers, then exits.

report: https://github.com/census-instrumentation/opencensus-python/pull/1112
saw: the process sits in logging.shutdown -> handler.flush() after its last line; here the export worker is alive and drains the queue.
mechanism: healthy: the handler registers no atexit hook of its own, so its worker is alive when logging.shutdown calls flush(); the flush marker sits behind the tracker's 21 summary records, which the worker sends to an ingestion endpoint that throttles (~25 s in all, asleep in pieces); it reaches the marker, sets the Event, and the interpreter exits.
expect: healthy
"""
import atexit
import logging
import queue
import sys
import threading
import time

from _zoo import ready, seconds

log = logging.getLogger("train")


class TelemetryLogHandler(logging.Handler):
    """Queues records; an export worker thread sends them to the telemetry service in batches."""

    def __init__(self, per_record_s):
        super().__init__()
        self.per_record_s = per_record_s
        self._queue = queue.Queue()
        self._worker = threading.Thread(target=self._export, name="AzureLogHandlerWorker", daemon=True)
        self._worker.start()

    def emit(self, record):
        self._queue.put(self.format(record))

    def flush(self):
        if self._queue.empty():
            return
        done = threading.Event()
        self._queue.put(done)
        done.wait()

    def _export(self):
        while True:
            item = self._queue.get()
            if isinstance(item, threading.Event):
                item.set()
                continue
            deadline = time.monotonic() + self.per_record_s  # the ingestion endpoint throttles
            while time.monotonic() < deadline:
                time.sleep(0.25)


METRICS = [f"eval/{task}_{m}" for task in ("arc", "boolq", "hellaswag", "mmlu", "piqa", "siqa", "wino") for m in ("acc", "acc_norm", "stderr")]


def run_summary():  # a tracker's exit hook, registered when it was imported: one line per metric
    for i, name in enumerate(METRICS):
        log.info("summary %s = %.4f", name, 0.5 + i / 100)
    ready()


if __name__ == "__main__":
    atexit.register(run_summary)  # `import tracker`
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
    handler = TelemetryLogHandler(per_record_s=0.0)
    logging.getLogger().addHandler(handler)
    for step in range(20):
        time.sleep(0.05)  # a training step
        log.info("step %d loss %.4f", step, 1.0 / (step + 1))
    handler.per_record_s = seconds(25) / len(METRICS)  # the service starts throttling: the summary takes ~25 s
    print("training done", flush=True)

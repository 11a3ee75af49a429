"""A library imported mid-run calls logging.config.dictConfig, which flushes the log-shipping handler: the service is slow to take the batch, then the run goes on.

report: https://github.com/logtail/logtail-python/pull/37
saw: dictConfig's flush of a shipping handler stalls the main thread while the log service is slow ("We hit it deterministically when BetterStack was slow"); here the worker needs no lock main holds.
mechanism: healthy: main holds logging's module lock in dictConfig and waits in the handler's flush for the flush worker. The worker's HTTP client logged its first DEBUG line when it started (so the level check is cached and takes no lock); its POST is slow (~25 s, the service answering 429 with Retry-After, asleep in pieces), then the batch is shipped, the flush returns and dictConfig finishes.
expect: healthy
"""
import logging
import logging.config
import os
import sys
import tempfile
import threading
import time

from _zoo import ready, seconds

http_log = logging.getLogger("urllib3.connectionpool")
log = logging.getLogger("train")


class ShippingHandler(logging.Handler):
    """Batches records; a flush worker thread POSTs them to the log service."""

    def __init__(self, spool, slow_s, batch=500, every_s=30.0):
        super().__init__()
        self.spool, self.slow_s, self.batch, self.every_s = spool, slow_s, batch, every_s
        self.cv = threading.Condition()
        self.pending, self.enqueued, self.shipped, self.flush_requested = [], 0, 0, False
        self.started = threading.Event()
        threading.Thread(target=self._worker, name="FlushWorker", daemon=True).start()
        self.started.wait()

    def emit(self, record):
        with self.cv:
            self.pending.append(self.format(record))
            self.enqueued += 1
            if len(self.pending) >= self.batch:
                self.cv.notify_all()

    def flush(self):
        with self.cv:
            target = self.enqueued
            self.flush_requested = True
            self.cv.notify_all()
            while self.shipped < target:
                self.cv.wait()

    def _worker(self):
        http_log.debug("connection pool for in.logs.example ready")  # before any dictConfig: cached
        self.started.set()
        while True:
            with self.cv:
                self.cv.wait_for(lambda: self.flush_requested or len(self.pending) >= self.batch, timeout=self.every_s)
                batch, self.pending, self.flush_requested = self.pending, [], False
            if batch:
                self._post(batch)
            with self.cv:
                self.shipped += len(batch)
                self.cv.notify_all()

    def _post(self, batch):
        http_log.debug("Starting new HTTPS connection (1): in.logs.example:443")
        deadline = time.monotonic() + self.slow_s  # 429 Too Many Requests, Retry-After: the service is slow today
        while time.monotonic() < deadline:
            time.sleep(0.5)
        self.slow_s = 0.0
        with open(self.spool, "a") as f:
            f.write("\n".join(batch) + "\n")


def vector_store_client_settings():  # what a client library does at import time
    logging.config.dictConfig({
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": "%(asctime)s %(name)s %(levelname)s %(message)s"}},
        "handlers": {"console": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout", "formatter": "plain"}},
        "loggers": {"vectorstore": {"handlers": ["console"], "level": "WARNING"}},
    })


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
    logging.getLogger().addHandler(ShippingHandler(os.path.join(tempfile.mkdtemp(), "shipped.log"), seconds(25)))
    for step in range(30):
        time.sleep(0.05)  # a training step
        log.info("step %d loss %.4f", step, 1.0 / (step + 1))
    log.info("building the retrieval index")
    ready()
    vector_store_client_settings()  # `import vectorstore` in the real job
    log.info("index ready")

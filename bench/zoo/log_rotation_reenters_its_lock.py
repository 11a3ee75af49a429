"""A metrics log that rotates itself when it grows too big writes a "rotated" line from inside its own locked write(): self-deadlock.

report: https://github.com/box/ClusterRunner/pull/48
also: https://github.com/amoffat/sh/issues/564 (a callback that re-enters a held non-reentrant lock)
saw: "This issue would cause the app to freeze up completely when it tried to rotate the first log file ... we now have a recursive logger call that tries to reacquire a lock in the recursive call." Fixed by making the lock an RLock.
mechanism: write() holds self.lock (a threading.Lock, shared with the uploader thread) while it checks the size and calls _rotate(); _rotate() reports the rotation through self.write(), which waits for the lock its own thread holds. A Lock has no owner, so the thread waits on itself forever (the uploader then waits behind it). The first rotation comes after ~60 steps.
expect: hung code.deadlock
"""
import json
import os
import tempfile
import threading
import time

import torch
from _zoo import ready


class MetricsLog:
    def __init__(self, path, max_bytes):
        self.path, self.max_bytes = path, max_bytes
        self.lock = threading.Lock()  # shared with the thread that uploads rotated files
        self.f = open(path, "a")
        threading.Thread(target=self._upload_rotated, name="metrics-uploader", daemon=True).start()

    def _upload_rotated(self):
        while True:
            time.sleep(0.5)
            with self.lock:
                if os.path.exists(self.path + ".1"):
                    os.remove(self.path + ".1")  # (the upload to object storage is elided)

    def write(self, record):
        with self.lock:  # HANG-HERE
            self.f.write(json.dumps(record) + "\n")
            self.f.flush()
            if self.f.tell() > self.max_bytes:
                self._rotate()

    def _rotate(self):
        self.f.close()
        os.replace(self.path, self.path + ".1")
        self.f = open(self.path, "a")
        ready()
        self.write({"event": "rotated", "previous": self.path + ".1"})  # re-enters write() with self.lock held


if __name__ == "__main__":
    metrics = MetricsLog(os.path.join(tempfile.mkdtemp(), "metrics.jsonl"), max_bytes=4096)
    model = torch.nn.Linear(32, 1)
    for step in range(130):
        loss = model(torch.randn(16, 32)).pow(2).mean()
        time.sleep(0.02)  # the rest of the step (the real model's forward and backward)
        metrics.write({"step": step, "loss": round(loss.item(), 6), "lr": 0.05, "grad_norm": 1.0})
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)

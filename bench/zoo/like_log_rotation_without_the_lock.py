"""Rotation writes its marker without re-taking the lock; the uploader then holds the lock ~15 s while it ships the file.

report: https://github.com/box/ClusterRunner/pull/48
mechanism: _rotate() writes through _append(), which expects the lock held, so nothing re-enters it. The uploader thread uploads the rotated file while holding the lock (~15 s, asleep in pieces, a slow object store), so the training loop waits in write() for a lock another live thread holds, then finishes.
expect: healthy
"""
import json
import os
import tempfile
import threading
import time

import torch
from _zoo import ready, seconds


class MetricsLog:
    def __init__(self, path, max_bytes):
        self.path, self.max_bytes = path, max_bytes
        self.lock = threading.Lock()
        self.f = open(path, "a")
        threading.Thread(target=self._upload_rotated, name="metrics-uploader", daemon=True).start()

    def _upload_rotated(self):
        while True:
            time.sleep(0.5)
            with self.lock:
                if os.path.exists(self.path + ".1"):
                    ready()
                    deadline = time.monotonic() + seconds(15)  # a slow upload, under the lock
                    while time.monotonic() < deadline:
                        time.sleep(0.5)
                    os.remove(self.path + ".1")

    def write(self, record):
        with self.lock:
            self._append(record)
            if self.f.tell() > self.max_bytes:
                self._rotate()

    def _append(self, record):  # caller holds self.lock
        self.f.write(json.dumps(record) + "\n")
        self.f.flush()

    def _rotate(self):
        self.f.close()
        os.replace(self.path, self.path + ".1")
        self.f = open(self.path, "a")
        self._append({"event": "rotated", "previous": self.path + ".1"})


if __name__ == "__main__":
    metrics = MetricsLog(os.path.join(tempfile.mkdtemp(), "metrics.jsonl"), max_bytes=4096)
    model = torch.nn.Linear(32, 1)
    for step in range(130):
        loss = model(torch.randn(16, 32)).pow(2).mean()
        time.sleep(0.02)  # the rest of the step (the real model's forward and backward)
        metrics.write({"step": step, "loss": round(loss.item(), 6), "lr": 0.05, "grad_norm": 1.0})
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)

"""The producer's put() rechecks the stop flag, and its first batch takes ~15 s (filling a shuffle buffer).

report: https://github.com/NVIDIA-NeMo/Automodel/pull/3049
mechanism: the training loop waits silently in queue.get() while the prefetch thread fills its shuffle buffer (asleep in pieces, ~15 s); then 20 steps run, and stop() joins a producer whose put(timeout=0.1) loop sees the flag and returns.
expect: healthy
"""
import queue
import threading
import time

import torch
from _zoo import ready, seconds


class Prefetcher:
    def __init__(self, make_batch, depth=4):
        self.q = queue.Queue(maxsize=depth)
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._fill, args=(make_batch,), name="prefetch")
        self.thread.start()

    def _fill(self, make_batch):
        i = 0
        while not self.stop_event.is_set():
            batch, i = make_batch(i), i + 1
            while not self.stop_event.is_set():  # a full queue: recheck the stop flag every 0.1 s
                try:
                    self.q.put(batch, timeout=0.1)
                    break
                except queue.Full:
                    pass

    def stop(self):
        self.stop_event.set()
        self.thread.join()

    def __iter__(self):
        return iter(self.q.get, None)


def make_batch(i):
    deadline = time.monotonic() + (seconds(15) if i == 0 else 0)  # batch 0: fill the shuffle buffer first
    while time.monotonic() < deadline:
        time.sleep(0.5)
    return torch.randn(64, 128), torch.randn(64, 1)


if __name__ == "__main__":
    model = torch.nn.Linear(128, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    print("streaming dataset opened", flush=True)
    batches = Prefetcher(make_batch)
    ready()
    for step, (x, y) in enumerate(batches):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}", flush=True)
        if step == 19:
            break
    batches.stop()

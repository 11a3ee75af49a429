"""A prefetch thread parked in put() on its full queue after training stopped at max_steps: stop() sets a flag and joins it forever.

report: https://github.com/NVIDIA-NeMo/Automodel/pull/3049
also: https://github.com/byte5ai/palaia/issues/368 ("the builder blocks in queue.put() (maxsize 4) with no cancellation signal")
saw: "stop() sets _stop_event and joins, but [the put] ... never observes _stop_event. If the background thread is parked here because the store is at its high watermark and the consumer has stopped draining (the common case at shutdown), stop() cannot wake it".
mechanism: the producer checks the stop flag only between batches; it is blocked in Queue.put() because the queue is full and the training loop (the only consumer) has left. stop() sets the flag and joins with no timeout: the main thread waits for the producer, and the producer waits for the main thread to take a batch.
expect: hung code.deadlock
"""
import queue
import threading

import torch
from _zoo import ready


class Prefetcher:
    def __init__(self, make_batch, depth=4):
        self.q = queue.Queue(maxsize=depth)
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._fill, args=(make_batch,), name="prefetch")
        self.thread.start()

    def _fill(self, make_batch):
        i = 0
        while not self.stop_event.is_set():  # checked only between batches
            self.q.put(make_batch(i))  # HANG-HERE (the other side of the cycle)
            i += 1

    def stop(self):
        self.stop_event.set()
        self.thread.join()  # HANG-HERE

    def __iter__(self):
        while True:
            yield self.q.get()


if __name__ == "__main__":
    model = torch.nn.Linear(128, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = Prefetcher(lambda i: (torch.randn(64, 128), torch.randn(64, 1)))
    for step, (x, y) in enumerate(batches):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}", flush=True)
        if step == 19:  # max_steps reached
            break
    ready()
    batches.stop()
    print("training done", flush=True)

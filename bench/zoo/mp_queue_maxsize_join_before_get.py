"""A test runs the model in a child that puts its results into a bounded multiprocessing Queue; the parent joins first.

report: https://github.com/vllm-project/vllm/pull/22371
also: https://github.com/python/cpython/issues/77259
saw: "The parent process waits for the child process to terminate (p.join()) before reading from the queue (queue.get()). If the queue is full, the child process will block on writing to it and will not terminate, causing the parent to wait indefinitely."
mechanism: Queue(maxsize=1).put() waits on the queue's semaphore of free slots, which only a get() releases; the one process that would get is in join(), waiting for the child's end.
expect: hung child.wait
accept: process.waits_on
"""
import multiprocessing as mp

from _zoo import ready


def run_model(q):
    for name in ("shard-0", "shard-1", "shard-2"):
        q.put({"name": name, "ok": True})  # HANG-HERE


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    q = ctx.Queue(maxsize=1)
    p = ctx.Process(target=run_model, args=(q,))
    p.start()
    ready()
    p.join()  # HANG-HERE
    print([q.get() for _ in range(3)], flush=True)

"""Load-generator workers meet the parent at a multiprocessing Barrier after each stage; one worker raised first.

report: https://github.com/kubernetes-sigs/inference-perf/pull/608
also: https://github.com/python/cpython/issues/123899
saw: "only num_workers of the required num_workers + 1 parties can arrive, so the parent blocks forever in a synchronous Barrier.wait()".
mechanism: a multiprocessing Barrier counts arrivals in shared memory; the worker that raised never arrives and nothing aborts the barrier, so the parent and the other worker wait on its condition forever.
expect: hung code.deadlock
accept: process.waits_on
"""
import multiprocessing as mp

from _zoo import ready


def worker(barrier, n):
    if n == 1:
        raise RuntimeError("stage 3: request schedule failed")  # before barrier.wait()
    barrier.wait()  # HANG-HERE


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(3)
    for n in range(2):
        ctx.Process(target=worker, args=(barrier, n)).start()
    ready()
    barrier.wait()  # HANG-HERE
    print("stage done", flush=True)

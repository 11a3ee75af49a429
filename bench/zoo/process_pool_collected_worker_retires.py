"""A ProcessPoolExecutor dropped without shutdown() while a max_tasks_per_child worker retires: its futures never complete.

report: https://github.com/python/cpython/issues/152967
saw: "the remaining futures never complete and interpreter exit hangs joining the executor manager thread".
mechanism: the manager thread replaces a retired worker through a weak reference to the executor; once the executor is collected no replacement is spawned, the queued calls have no worker, and main waits on a future forever.
expect: hung child.lost_work
accept: code.deadlock, process.waits_on, unknown
"""
from concurrent.futures import ProcessPoolExecutor

from _zoo import ready


def work(i):
    return i * i


def make_futures():
    exe = ProcessPoolExecutor(1, max_tasks_per_child=1)
    return [exe.submit(work, i) for i in range(4)]


if __name__ == "__main__":
    futs = make_futures()
    ready()
    print([f.result() for f in futs], flush=True)  # HANG-HERE

"""Results come back through a Manager's queue; the producer dies before it puts, and get() waits for ever.

report: https://github.com/geldata/gel/issues/8198
saw: "A test dying uncleanly hangs in the test runner forever ... We spent a long time thinking about potential deadlocks when something was hanging when actually it had just died."
mechanism: the Manager's server runs main's get() in the thread of main's connection, on a queue.Queue only a put() request could fill; the one process that would have sent it is gone.
expect: hung process.waits_on
"""
import multiprocessing as mp
import os

from _zoo import ready


def run_test(results):
    os._exit(-11 & 0xFF)  # a native crash before it reports


if __name__ == "__main__":
    with mp.Manager() as manager:
        results = manager.Queue()
        runner = mp.Process(target=run_test, args=(results,))
        runner.start()
        runner.join()
        ready()
        print("result:", results.get(), flush=True)  # HANG-HERE

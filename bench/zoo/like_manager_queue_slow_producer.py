"""The same Manager queue, whose producer computes a while before it puts.

report: https://github.com/geldata/gel/issues/8198
saw: the wait ends when the producer reports; the hang needs the producer dead.
mechanism: healthy: the producer, alive and at CPU, puts its result after a silent computation.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds


def run_test(results, s):
    end, n = time.monotonic() + s, 0
    while time.monotonic() < end:
        n += 1
    results.put(n)


if __name__ == "__main__":
    with mp.Manager() as manager:
        results = manager.Queue()
        runner = mp.Process(target=run_test, args=(results, seconds(60)))
        runner.start()
        ready()
        print("result:", results.get() > 0, flush=True)
        runner.join()

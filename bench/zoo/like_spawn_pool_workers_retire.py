"""The fixed version of a spawn Pool search: the pool is started under the `__main__` guard, with one task a worker
(maxtasksperchild=1): workers come and go, each importing the script again, and the job prints nothing until the
end.

report: https://github.com/kernc/backtesting.py/pull/1258
saw: the same search, fixed ("Fix mp.Pool hang with multiprocessing start_method 'spawn'"): silent while it scores
mechanism: every worker is new (spawned, the script imported again, one task, then it exits): processes start and end all the time, with no output; every task completes.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds

TASK_S = seconds(30) / 6


def score(cfg):
    time.sleep(TASK_S)  # one backtest
    return cfg, (cfg * 37) % 11


if __name__ == "__main__":
    print("scoring 12 configs on a spawn pool", flush=True)
    with mp.get_context("spawn").Pool(2, maxtasksperchild=1) as pool:
        ready()
        best = max(pool.map(score, range(12), chunksize=1), key=lambda r: r[1])
    print("best config", best, flush=True)

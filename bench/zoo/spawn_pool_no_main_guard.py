"""A spawn Pool started from the script's top level with no `if __name__ == "__main__":` guard: every worker dies as
it starts, the pool replaces it for ever, and map() never returns.

report: https://github.com/kernc/backtesting.py/issues/1256
also: https://github.com/kernc/backtesting.py/pull/1258 , https://github.com/SigProfilerSuite/SigProfilerExtractor/issues/88 , https://github.com/codedownio/julia2nix/issues/9
saw: "MultiBacktest Hangs"; "The program gets stuck in a continuous loop producing the same error"
mechanism: a spawned worker imports the main script again (as __mp_main__) to find the task's function; reaching Pool() again while it is imported, it raises "An attempt has been made to start a new process before the current process has finished its bootstrapping phase" and exits 1 before it takes a task. The pool's worker handler starts a replacement, which dies the same way; the same traceback repeats on stderr, so the output never stops.
expect: hung child.wait
output: file
"""
import multiprocessing as mp
import time

from _zoo import ready

if __name__ == "__main__":
    print("scoring 8 configs on a spawn pool", flush=True)
time.sleep(0.5)  # loads the price table (each spawned worker runs this line again)


def score(cfg):
    time.sleep(2.0)  # one backtest
    return cfg, (cfg * 37) % 11


def search():
    with mp.get_context("spawn").Pool(2) as pool:
        if __name__ == "__main__":
            ready()
        best = max(pool.map(score, range(8), chunksize=1), key=lambda r: r[1])  # HANG-HERE
    print("best config", best, flush=True)


search()  # no __main__ guard

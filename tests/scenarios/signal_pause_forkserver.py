"""A launcher starts its worker through a forkserver (so the worker is the forkserver's child, not its own), then waits
in signal.pause() with no handler installed: the worker ends it with a signal whose default action ends the launcher.
`python signal_pause_forkserver.py SECONDS`: the worker waits SECONDS, then sends SIGUSR1 to the launcher, which
dies of it (exit 138): healthy, by design. `python signal_pause_forkserver.py hang`: the worker exits at once without
sending it, and nothing else can end the pause."""

import multiprocessing as mp
import os
import signal
import sys
import time


def work(launcher: int, arg: str) -> None:
    if arg == "hang":
        return  # forgets to tell the launcher
    time.sleep(float(arg))  # waits for its data, on a timer that ends within the job's bounds
    print("done", flush=True)
    os.kill(launcher, signal.SIGUSR1)


if __name__ == "__main__":
    worker = mp.get_context("forkserver").Process(target=work, args=(os.getpid(), sys.argv[1]))
    worker.start()
    signal.pause()  # HANG-HERE

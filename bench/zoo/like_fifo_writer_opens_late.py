"""A trainer opens its control FIFO to read commands; the controller opens it to write after it loads.

report: https://github.com/golang/go/issues/33050
saw: an open() of a FIFO waits for a writer; it is a hang only if no writer will come.
mechanism: healthy: the controller (a child) loads for a while, asleep in pieces, then opens the FIFO, writes one command and closes it; the trainer's open returns and it reads to the end.
expect: healthy
"""
import multiprocessing as mp
import os
import tempfile
import time

from _zoo import ready, seconds


def controller(path):
    for _ in range(int(seconds(20))):
        time.sleep(1)  # loading its schedule
    with open(path, "w") as f:
        f.write("start\n")


if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "control")
    os.mkfifo(path)
    child = mp.get_context("fork").Process(target=controller, args=(path,))
    child.start()
    ready()
    with open(path) as commands:
        for line in commands:
            print("command:", line.strip(), flush=True)
    child.join()

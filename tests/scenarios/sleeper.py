"""A job in a long sleep: nothing known matches. Used for process.stopped (SIGSTOP) and unknown."""

import time

from _ready import ready


def wait_for_gpu_slot():
    ready()
    time.sleep(3600)  # HANG-HERE


if __name__ == "__main__":
    wait_for_gpu_slot()

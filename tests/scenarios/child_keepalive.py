"""The job starts a helper process and waits for it (Process.join, no timeout); the helper's last act is a
keep-alive loop with no way out (`while True: time.sleep(1)`), so it never exits and the join never returns.
With HW_HELPER_EXIT_S=N the loop ends after N seconds (its twin: the join returns)."""

import multiprocessing as mp
import os
import time

from _ready import ready


def keep_alive():
    while True:
        time.sleep(0.2)  # HANG-HERE:child


def keep_alive_for(seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.2)


def helper():
    seconds = float(os.environ.get("HW_HELPER_EXIT_S", "0"))
    if seconds:
        keep_alive_for(seconds)
    else:
        keep_alive()


if __name__ == "__main__":
    p = mp.get_context("fork").Process(target=helper, name="shard-uploader")
    p.start()
    ready()
    p.join()  # HANG-HERE:parent
    print("uploaded", flush=True)

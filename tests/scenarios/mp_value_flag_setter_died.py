"""Main polls a multiprocessing.Value flag that its child was to set, sleeping between reads; the child died first
(`python mp_value_flag_setter_died.py hang`). Twins: `twin`, the child computes, then sets it after 600 s; `thread`,
the child died but a thread of main's sets it after 600 s; `SECONDS`, the child sets it after SECONDS and the job
ends."""

import multiprocessing as mp
import os
import sys
import threading
import time

from _ready import ready


def child(flag, arg: str) -> None:
    if arg in ("hang", "thread"):
        os._exit(1)  # dies before it sets the flag
    time.sleep(600 if arg == "twin" else float(arg))
    flag.value = 1


if __name__ == "__main__":
    arg = sys.argv[1]
    flag = mp.get_context("fork").Value("i", 0)
    p = mp.get_context("fork").Process(target=child, args=(flag, arg))
    p.start()
    if arg == "thread":
        threading.Thread(target=lambda: (time.sleep(600), setattr(flag, "value", 1)), daemon=True).start()
    ready()
    while flag.value == 0:
        time.sleep(0.05)  # HANG-HERE
    print("done", flush=True)
    p.join()

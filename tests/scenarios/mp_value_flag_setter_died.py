"""Main polls a multiprocessing.Value flag that its child was to set, sleeping between reads; the child died first
(`python mp_value_flag_setter_died.py hang`). Twins: `twin`, the child computes, then sets it after 600 s; `thread`,
the child died but a thread of main's sets it after 600 s; `setexit`, the child sets it and exits while main sleeps
600 s between its reads (it has not read it since); `daemon`, a daemon the child forked off sets it after 600 s;
`SECONDS`, the child sets it after SECONDS and the job ends."""

import multiprocessing as mp
import os
import sys
import threading
import time

from _ready import ready


def child(flag, arg: str) -> None:
    if arg == "daemon":  # a daemon forked off, in a session of its own (off the job's tree), sets it after 600 s
        if os.fork() == 0:
            os.setsid()
            time.sleep(0.5)  # (its parent, the child, gone by then: a zombie)
            ready()
            time.sleep(600)
            flag.value = 1
        os._exit(0)
    if arg in ("hang", "thread"):
        os._exit(1)  # dies before it sets the flag
    time.sleep(0.5 if arg == "setexit" else 600 if arg == "twin" else float(arg))
    flag.value = 1
    if arg == "setexit":  # set, then gone, while main sleeps 600 s before it reads the flag again
        ready()
        os._exit(0)


if __name__ == "__main__":
    arg = sys.argv[1]
    flag = mp.get_context("fork").Value("i", 0)
    p = mp.get_context("fork").Process(target=child, args=(flag, arg))
    p.start()
    if arg == "thread":
        threading.Thread(target=lambda: (time.sleep(600), setattr(flag, "value", 1)), daemon=True).start()
    if arg not in ("setexit", "daemon"):
        ready()
    while flag.value == 0:
        time.sleep(600 if arg == "setexit" else 0.05)  # HANG-HERE
    print("done", flush=True)
    p.join()

"""A trainer that, after its first steps, busy-waits for something. MODE (argv[1]):

- ``fetches``: `while not state["ready"]: pass` until its prefetch thread sets the flag, which it does once the file
  GO (argv[2]) exists (it polls for it, asleep between checks, at most 60 s): the job goes on and exits 0;
- ``raised``: the same wait, but the prefetch thread raised before setting it: nothing else can, it never ends;
- ``local``: `while i < n: pass` on two local numbers, beside a heartbeat thread that sleeps between its ticks: no
  thread can change them, it never ends."""

import os
import sys
import threading
import time

from _ready import ready


def fetch(state: dict[str, bool], mode: str, go: str) -> None:
    if mode == "raised":
        raise FileNotFoundError("shard-00017.tar")
    deadline = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.1)
    state["ready"] = True


def heartbeat() -> None:
    while True:
        time.sleep(0.5)


def main(mode: str, go: str) -> None:
    for step in range(4):
        time.sleep(0.2)
        print(f"step {step}", flush=True)
    state = {"ready": False}
    if mode == "local":
        threading.Thread(target=heartbeat, daemon=True).start()
        i, n = 0, 10
        ready()
        while i < n:  # LOCAL-HERE
            pass
    threading.Thread(target=fetch, args=(state, mode, go), daemon=True).start()
    ready()
    while not state["ready"]:  # HANG-HERE
        pass
    for step in range(4, 7):
        time.sleep(0.2)
        print(f"step {step}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")

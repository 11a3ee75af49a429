"""A trainer that, after its first steps, busy-waits (`while not state["ready"]: pass`) for its prefetch thread to
fetch the next shard. MODE (argv[1]): ``fetches`` (the thread sleeps SECONDS, argv[2], then sets the flag: the job
goes on and exits 0) or ``raised`` (the thread raised before setting it: nothing else can, the loop never ends)."""

import sys
import threading
import time

from _ready import ready


def fetch(state: dict[str, bool], mode: str, seconds: float) -> None:
    if mode == "raised":
        raise FileNotFoundError("shard-00017.tar")
    time.sleep(seconds)
    state["ready"] = True


def main(mode: str, seconds: float) -> None:
    for step in range(4):
        time.sleep(0.2)
        print(f"step {step}", flush=True)
    state = {"ready": False}
    threading.Thread(target=fetch, args=(state, mode, seconds), daemon=True).start()
    ready()
    while not state["ready"]:  # HANG-HERE
        pass
    for step in range(4, 7):
        time.sleep(0.2)
        print(f"step {step}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 12.0)

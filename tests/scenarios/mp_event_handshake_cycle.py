"""Two processes, each waiting for the other's multiprocessing Event before setting its own: a handshake written the
same way on both sides, so neither ever sets. `python mp_event_handshake_cycle.py hang`; `... SECONDS`: main sets
its event first, after SECONDS, and both go on."""

import multiprocessing as mp
import sys
import time


def peer(mine, theirs) -> None:  # type: ignore[no-untyped-def]
    theirs.wait()
    mine.set()


if __name__ == "__main__":
    ready, go = mp.Event(), mp.Event()  # ready: the peer's; go: main's
    p = mp.Process(target=peer, args=(ready, go))
    p.start()
    if sys.argv[1] != "hang":
        time.sleep(float(sys.argv[1]))
        go.set()
    ready.wait()  # HANG-HERE
    go.set()
    p.join()
    print("done", flush=True)

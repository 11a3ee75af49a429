"""Fast steps, then the main process waits in Listener.accept() (no timeout) for an evaluator process it started,
which computes for argv[1] seconds and then connects with its result; then fast steps again. A healthy job: the
parent's wait is on the network with no timeout, but what it waits for is the work of its own child."""

import multiprocessing as mp
import sys
import time
from multiprocessing.connection import Client, Listener

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0


def evaluate(address, s):
    deadline, n = time.monotonic() + s, 0
    while time.monotonic() < deadline:
        n += sum(i * i for i in range(20000))  # the evaluation, one long call after another
    with Client(address) as c:
        c.send(f"eval done ({n % 97})")


def main():
    for step in range(20):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    with Listener(("127.0.0.1", 0)) as listener:
        p = mp.get_context("fork").Process(target=evaluate, args=(listener.address, SECONDS), name="evaluator")
        p.start()
        with listener.accept() as conn:  # WAIT-HERE
            print(conn.recv(), flush=True)
        p.join(timeout=30)
    for step in range(20, 40):
        print(f"step {step}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    main()

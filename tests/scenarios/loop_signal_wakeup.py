"""An asyncio job waits for an Event that a SIGTERM (a scheduler's preemption notice, sent here by a child of the job)
is to set (python/cpython#122938). `python loop_signal_wakeup.py hang`: the handler is installed with signal.signal,
which cannot wake the loop: it sets the Event between two polls, the loop polls again with no timeout and never runs
the waiter; the child that sent the signal has exited. `python loop_signal_wakeup.py SECONDS`: the handler is the
loop's own (loop.add_signal_handler: the signal writes to the loop's wake-up socket), and the child sends the signal
after SECONDS: the loop wakes, the job ends with `done`."""

import asyncio
import os
import signal
import subprocess
import sys

HANG = sys.argv[1] == "hang"


async def serve() -> None:
    stop = asyncio.Event()
    if HANG:
        signal.signal(signal.SIGTERM, lambda *_: stop.set())  # runs between two polls: nothing wakes the loop
        delay = 1.0
    else:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        delay = float(sys.argv[1])
    subprocess.Popen(["sh", "-c", f"sleep {delay}; kill -TERM {os.getpid()}"])
    await stop.wait()
    print("done", flush=True)


asyncio.run(serve())  # HANG-HERE

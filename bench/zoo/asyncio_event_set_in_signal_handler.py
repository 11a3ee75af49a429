"""A job awaits the asyncio Event its SIGTERM handler sets, installed with signal.signal: the notice arrives, the loop sleeps on.

report: https://github.com/python/cpython/issues/122938
saw: an asyncio service whose SIGTERM handler sets an Event; the signal arrives and the awaiting task never resumes.
mechanism: a handler installed with signal.signal runs between bytecodes and Event.set() only schedules the waiter's wake-up (call_soon); nothing writes to the loop's wake-up socket, so its select has no timeout, no ready callback and no file but that socket, and the only process that sent the signal has exited.
expect: hung code.deadlock
accept: process.waits_on
"""
import asyncio
import os
import signal
import subprocess

from _zoo import ready

state = {}


def on_sigterm(signum, frame):
    state["stop"].set()  # from a signal.signal handler: call_soon only, nothing wakes the selector


async def serve():
    stop = state["stop"] = asyncio.Event()
    signal.signal(signal.SIGTERM, on_sigterm)
    subprocess.Popen(["sh", "-c", f"sleep 1; kill -TERM {os.getpid()}"])  # the scheduler's preemption notice
    ready()
    await stop.wait()  # HANG-HERE
    print("preempted: checkpoint saved", flush=True)


if __name__ == "__main__":
    asyncio.run(serve())  # HANG-HERE (a suspended coroutine has no frame on the stack)

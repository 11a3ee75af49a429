"""The same preemption notice through loop.add_signal_handler: the loop wakes when the child's SIGTERM arrives.

report: https://github.com/python/cpython/issues/122938
saw: the fix the report's thread gives: a handler that runs on the loop, which its wake-up socket wakes.
mechanism: healthy: the loop polls only its own wake-up socket while a child that will send the signal sleeps; the signal's C handler writes to that socket, the loop runs stop.set and the job ends.
expect: healthy
"""
import asyncio
import os
import signal
import subprocess

from _zoo import ready, seconds


async def serve():
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)  # runs on the loop, wakes it
    subprocess.Popen(["sh", "-c", f"sleep {seconds(12):.0f}; kill -TERM {os.getpid()}"])
    ready()
    await stop.wait()
    print("preempted: checkpoint saved", flush=True)


if __name__ == "__main__":
    asyncio.run(serve())

"""asyncio.run() finishes the coroutine, and its shutdown waits for an executor thread that gets its last line late.

report: https://github.com/jaredrhod/backtalk/issues/24
saw: the fix's shape: whatever the executor thread waits for comes, so the shutdown's join ends.
mechanism: healthy: the executor thread waits in Queue.get() with no timeout, but a live thread computes the last reply for a while and then puts it; the shutdown's join ends, and asyncio.run returns.
expect: healthy
"""
import asyncio
import queue
import threading
import time

from _zoo import ready, seconds

typed = queue.Queue()


def read_typed():
    return typed.get()


def transcribe(s):
    deadline, n = time.monotonic() + s, 0
    while time.monotonic() < deadline:
        n += sum(i * i for i in range(20000))  # the last reply, computed
    typed.put(f"bye ({n % 97})")


async def main():
    loop = asyncio.get_running_loop()
    line = loop.run_in_executor(None, read_typed)
    await asyncio.sleep(0.5)
    line.cancel()
    threading.Thread(target=transcribe, args=(seconds(30),), name="transcriber").start()
    print("[backtalk] hung up", flush=True)
    ready()


if __name__ == "__main__":
    asyncio.run(main())

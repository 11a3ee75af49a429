"""A thread submits a coroutine to a running event loop and waits for its result; the coroutine is slow, then returns.

report: https://github.com/zigpy/bellows/issues/745
saw: the healthy shape: the loop runs, so the future resolves when the coroutine ends.
mechanism: healthy: the loop's thread is alive; the coroutine awaits a timer (a slow radio's reply) and returns.
expect: healthy
"""
import asyncio
import threading

from _zoo import ready, seconds

loop = asyncio.new_event_loop()
threading.Thread(target=loop.run_forever, daemon=True, name="radio").start()


async def read_attribute(s):
    await asyncio.sleep(s)  # the radio answers late
    return 42


if __name__ == "__main__":
    fut = asyncio.run_coroutine_threadsafe(read_attribute(seconds(30)), loop)
    ready()
    print(fut.result(), flush=True)
    loop.call_soon_threadsafe(loop.stop)

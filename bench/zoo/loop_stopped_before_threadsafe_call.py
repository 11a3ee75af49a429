"""A thread submits a coroutine to an event loop that was stopped, and waits for its result with no timeout.

report: https://github.com/zigpy/bellows/issues/745
also: https://github.com/python/cpython/pull/127576
saw: "`asyncio.run_coroutine_threadsafe` ... does NOT raise"; "HANG: never resolves; caller has no timeout".
mechanism: the loop's thread returned from run_forever() (stopped, not closed), so the coroutine is scheduled on a loop nothing runs; the future's result() waits with no timeout, and no other thread is left to resolve it.
expect: hung code.deadlock
"""
import asyncio
import threading
import time

from _zoo import ready

loop = asyncio.new_event_loop()
worker = threading.Thread(target=loop.run_forever, daemon=True, name="radio")
worker.start()
time.sleep(0.3)
loop.call_soon_threadsafe(loop.stop)  # what a force_stop() does on a lost connection
worker.join()


async def read_attribute():
    return 42


if __name__ == "__main__":
    fut = asyncio.run_coroutine_threadsafe(read_attribute(), loop)  # no error: the loop is not closed
    ready()
    print(fut.result(), flush=True)  # HANG-HERE

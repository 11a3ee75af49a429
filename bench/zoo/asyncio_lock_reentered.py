"""A coroutine holding an asyncio.Lock awaits a helper that takes the same lock: the task waits on itself.

report: https://github.com/python/asyncio/issues/439
saw: "Since `asyncio.Lock` is not reentrant, there is no way the same task could acquire the same lock more than once, so the following code will obviously block".
mechanism: the helper's acquire() awaits a future only the lock's holder would resolve, and the holder is the same task, suspended in that await; the loop has no other task, no timer and no file but its own wake-up socket, so it waits in epoll_wait with no timeout.
expect: hung code.deadlock
accept: process.waits_on
"""
import asyncio

from _zoo import ready

mutex = asyncio.Lock()


async def save_checkpoint(step):
    async with mutex:  # HANG-HERE
        print(f"saved step {step}", flush=True)


async def train():
    for step in range(3):
        async with mutex:
            print(f"step {step}", flush=True)
            if step == 2:
                ready()
                await save_checkpoint(step)


if __name__ == "__main__":
    asyncio.run(train())  # HANG-HERE (a suspended coroutine has no frame: the loop's caller is the place)

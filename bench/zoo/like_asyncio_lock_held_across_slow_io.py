"""A coroutine waits for an asyncio.Lock that another task holds across a slow upload; the upload ends, and so does the wait.

report: https://github.com/python/asyncio/issues/439
saw: the lock serialises two tasks; the waiter looks stuck while the holder's I/O is slow.
mechanism: healthy: the holder awaits a sleep (a slow upload's pace) while it holds the lock; the loop has a timer, so it wakes and the holder releases the lock in time.
expect: healthy
"""
import asyncio

from _zoo import ready, seconds

mutex = asyncio.Lock()


async def upload(s):
    async with mutex:
        for _ in range(10):
            await asyncio.sleep(s / 10)  # a slow upload, chunk by chunk
        print("uploaded", flush=True)


async def save_checkpoint():
    async with mutex:
        print("saved", flush=True)


async def main():
    up = asyncio.create_task(upload(seconds(30)))
    await asyncio.sleep(0.2)
    ready()
    await save_checkpoint()
    await up


if __name__ == "__main__":
    asyncio.run(main())

"""Shard prefetch tasks share a token refreshed under a threading.Lock, and the refresh awaits its request while
holding the lock: the next task's blocking acquire() stops the event loop's thread, so the task holding the lock is
never resumed to release it. `python asyncio_thread_lock_across_await.py hang`; `python
asyncio_thread_lock_across_await.py SECONDS`: the acquire gives up after SECONDS and the task fetches a token of its
own, and the job ends."""

import asyncio
import sys
import threading
import time

TIMEOUT = -1 if sys.argv[1] == "hang" else float(sys.argv[1])
_lock = threading.Lock()
_token: dict[str, object] = {"value": None, "expires": 0.0}


async def fetch_token() -> str:
    await asyncio.sleep(0.5)  # the token request's round trip
    return f"tok-{time.time():.0f}"


async def get_token() -> object:
    if not _lock.acquire(timeout=TIMEOUT):  # HANG-HERE
        return await fetch_token()
    try:
        if float(_token["expires"]) < time.time():  # type: ignore[arg-type]
            _token["value"] = await fetch_token()  # awaits while holding a threading.Lock
            _token["expires"] = time.time() + 3600
        return _token["value"]
    finally:
        _lock.release()


async def prefetch(shard: int) -> int:
    await get_token()
    await asyncio.sleep(0.2)  # reads the shard with the token
    return shard


async def main() -> None:
    print("prefetched", await asyncio.gather(*(prefetch(s) for s in range(3))), flush=True)


asyncio.run(main())
print("done", flush=True)

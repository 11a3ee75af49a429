"""An asyncio client retries with exponential backoff and no cap: after enough failures its next sleep is 12 days.

report: https://github.com/softwaremill/retry/pull/16
also: https://github.com/GameAnalytics/current/pull/6
saw: "if your task fails 15 times you might end up waiting 9 hours instead 1 second between retries".
mechanism: `await asyncio.sleep(2 ** attempt)` after the 20th failure: the event loop's only timer is due in 2**20 s;
the loop waits in epoll_wait until then, far past any bound.
expect: hung code.deadlock
accept: process.waits_on, io.network_wait
"""
import asyncio

from _zoo import ready


async def fetch_metadata():
    raise ConnectionError("registry unavailable")


async def main():
    for attempt in range(100):
        try:
            return await fetch_metadata()
        except ConnectionError:
            if attempt == 20:
                ready()
            if attempt >= 20:
                await asyncio.sleep(2**attempt)  # 2**20 s: 12 days
            # (the first 20 failures come at once here; in the report they took minutes)


if __name__ == "__main__":
    asyncio.run(main())  # HANG-HERE (a suspended coroutine has no frame: its loop's line)

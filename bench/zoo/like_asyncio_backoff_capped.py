"""The same asyncio retries, the backoff capped: the client sleeps well under a minute, and the registry answers.

report: https://github.com/softwaremill/retry/pull/16
saw: a capped backoff waits a bounded time between retries.
mechanism: healthy: the loop's only timer is due within the bound; after it the fetch succeeds and the job ends.
expect: healthy
"""
import asyncio

from _zoo import ready, seconds


async def fetch_metadata(attempt):
    if attempt < 1:
        raise ConnectionError("registry unavailable")
    return {"ok": True}


async def main():
    for attempt in range(100):
        try:
            return await fetch_metadata(attempt)
        except ConnectionError:
            ready()
            await asyncio.sleep(min(2**30, seconds(40)))  # capped


if __name__ == "__main__":
    print(asyncio.run(main()), flush=True)

"""An async data service awaits a future that no callback will ever resolve: the event loop sleeps in epoll_wait for ever.

report: https://github.com/python/cpython/issues/112741
also: https://github.com/plastic-labs/honcho/issues/913
saw: "the asyncio event loop becomes parked in epoll_wait(2) with no timer schedule and no I/O events pending".
mechanism: the coroutine awaits a Future whose resolver was never registered (a lost callback); the loop has no ready callback, no timer and no file but its own wake-up socketpair, so it selects with no timeout and nothing can wake it.
expect: hung process.waits_on
accept: code.deadlock, io.network_wait
"""
import asyncio

from _zoo import ready


async def fetch_shard(loop):
    answer = loop.create_future()  # the callback that sets it was never registered
    ready()
    return await answer  # HANG-HERE


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    print(loop.run_until_complete(fetch_shard(loop)), flush=True)  # HANG-HERE (a suspended coroutine has no frame on the stack)

"""asyncio.run() finishes the coroutine, then never exits: its shutdown joins an executor thread blocked in Queue.get().

report: https://github.com/jaredrhod/backtalk/issues/24
also: https://github.com/python/cpython/issues/111358
saw: "prints `[backtalk] hung up` and then never exits ... asyncio.run() deadlocks joining blocked run_in_executor threads".
mechanism: cancelling the asyncio future of run_in_executor(None, ...) does not stop its thread, which waits in Queue.get() with no timeout; asyncio.run's shutdown_default_executor joins that thread (from a helper thread, the loop awaiting it in epoll), and nothing will ever put.
expect: hung code.deadlock
accept: process.waits_on, unknown
"""
import asyncio
import queue

from _zoo import ready

typed = queue.Queue()


def read_typed():
    return typed.get()  # HANG-HERE


async def main():
    loop = asyncio.get_running_loop()
    line = loop.run_in_executor(None, read_typed)
    await asyncio.sleep(0.5)
    line.cancel()  # cancels the asyncio future only: its thread keeps waiting
    print("[backtalk] hung up", flush=True)
    ready()  # the coroutine ends here; asyncio.run's shutdown starts


if __name__ == "__main__":
    asyncio.run(main())

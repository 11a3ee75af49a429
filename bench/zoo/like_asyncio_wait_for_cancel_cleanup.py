"""asyncio.wait_for times out a probe whose task cleans up on cancel for a while, then re-raises: the job goes on.

report: https://github.com/python/cpython/issues/87555
saw: the report's hang is a task that swallows the CancelledError of wait_for's timeout; here the cancel is honoured late.
mechanism: healthy: the probe's task catches CancelledError, flushes its log in pieces (asleep, waking every 0.5 s) and re-raises; wait_for then raises TimeoutError and the job trains without online eval.
expect: healthy
"""
import asyncio

from _zoo import free_port, ready, seconds


async def wait_for_eval_server(port):
    while True:
        try:
            await asyncio.sleep(0.5)
            _, w = await asyncio.open_connection("127.0.0.1", port)
            w.close()
            return
        except ConnectionError:
            pass
        except asyncio.CancelledError:  # cleanup on cancel (flush the probe log, in pieces), then re-raise
            for _ in range(int(seconds(12) / 0.5)):
                await asyncio.sleep(0.5)
            raise


async def main():
    port = free_port()  # the eval server never comes up
    try:
        ready()
        await asyncio.wait_for(wait_for_eval_server(port), timeout=2)
    except TimeoutError:
        print("eval server not up: training without online eval", flush=True)


if __name__ == "__main__":
    asyncio.run(main())

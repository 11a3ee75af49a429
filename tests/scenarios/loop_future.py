"""An asyncio job that takes fast steps, then waits for a coroutine's result through run_coroutine_threadsafe().
argv[1] ``loop``: the wait runs on the event loop's own thread (a callback of it), so the loop that would run the
coroutine cannot (aiomqtt#174): hung. ``thread``: the same call from another thread, while the loop polls every
0.5 s; the result comes after argv[2] seconds (the healthy twin, silent the whole time)."""

import asyncio
import sys
import threading

from _ready import ready

MODE = sys.argv[1] if len(sys.argv) > 1 else "loop"
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0


async def fetch() -> int:
    await asyncio.sleep(SECONDS if MODE == "thread" else 0.1)
    return 42


def on_message(loop: asyncio.AbstractEventLoop) -> int:
    fut = asyncio.run_coroutine_threadsafe(fetch(), loop)
    return fut.result()  # HANG-HERE


async def main() -> None:
    loop = asyncio.get_running_loop()
    for i in range(30):
        print(f"step {i}", flush=True)
        await asyncio.sleep(0.05)
    ready()
    if MODE == "loop":
        on_message(loop)
    else:
        t = threading.Thread(target=lambda: print("got", on_message(loop), flush=True))
        t.start()
        while t.is_alive():
            await asyncio.sleep(0.5)
    print("done", flush=True)


asyncio.run(main())

"""The same call from an executor thread, as run_coroutine_threadsafe() is meant to be used; the coroutine takes a while.

report: https://github.com/empicano/aiomqtt/issues/174
saw: at startup the same method runs in an executor thread, where fut.result() returns once the loop ran it.
mechanism: healthy: the loop thread polls (a timer every 0.5 s) and runs the coroutine; the executor thread waits.
expect: healthy
"""
import asyncio
import threading

from _zoo import ready, seconds


async def register_writer(s):
    await asyncio.sleep(s)
    return True


def on_socket_register_write(loop, s):
    fut = asyncio.run_coroutine_threadsafe(register_writer(s), loop)
    print("registered", fut.result(), flush=True)


async def main():
    loop = asyncio.get_running_loop()
    for i in range(20):
        print(f"published {i}", flush=True)
        await asyncio.sleep(0.05)
    ready()
    t = threading.Thread(target=on_socket_register_write, args=(loop, seconds(40)), name="executor")
    t.start()
    while t.is_alive():
        await asyncio.sleep(0.5)


if __name__ == "__main__":
    asyncio.run(main())

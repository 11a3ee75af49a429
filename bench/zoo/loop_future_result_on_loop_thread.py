"""A callback of the event loop waits for a coroutine it scheduled on that same loop with run_coroutine_threadsafe().

report: https://github.com/empicano/aiomqtt/issues/174
saw: _on_socket_register_write(), called from the event loop itself, blocked in fut.result(): the client froze.
mechanism: the loop that would run the coroutine is the thread blocked in Future.result(); nothing else can run it.
expect: hung code.deadlock
"""
import asyncio

from _zoo import ready


async def register_writer():
    await asyncio.sleep(0)
    return True


def on_socket_register_write(loop):
    fut = asyncio.run_coroutine_threadsafe(register_writer(), loop)
    return fut.result()  # HANG-HERE


async def main():
    loop = asyncio.get_running_loop()
    for i in range(20):
        print(f"published {i}", flush=True)
        await asyncio.sleep(0.05)
    ready()
    on_socket_register_write(loop)


if __name__ == "__main__":
    asyncio.run(main())

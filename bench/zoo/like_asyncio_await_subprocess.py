"""An async launcher awaits a converter subprocess that takes a while: its event loop sleeps in epoll_wait meanwhile.

report: https://github.com/python/cpython/issues/125502
saw: an event loop parked with no timer and no I/O pending looks stuck, yet a child watcher thread is waiting for the subprocess.
mechanism: healthy: asyncio's child watcher thread waits in waitpid for the converter (a native `sleep`, its output not piped); when it exits, the watcher wakes the loop through its wake-up socket and the await returns.
expect: healthy
"""
import asyncio

from _zoo import ready, seconds


async def convert():
    proc = await asyncio.create_subprocess_exec("sleep", str(int(seconds(20))))
    ready()
    return await proc.wait()


if __name__ == "__main__":
    print("converter exited", asyncio.run(convert()), flush=True)

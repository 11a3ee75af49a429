"""asyncio's communicate(None) leaves the child's stdin open (cpython#83925): `cat` reads it for ever, and the parent
awaits cat's output's end, while its child watcher thread waits for cat's exit. `python asyncio_child_reads_its_stdin.py
hang`. Twins, where a thread of the parent's closes cat's stdin (through the loop): `twin`, after a sleep of 600 s;
`outside`, after a helper child's answer (it sleeps 600 s first); `SECONDS`, after a sleep of SECONDS: the job ends.
`serve`: the loop serves clients on a listening socket instead, cat kept as its worker (no client comes)."""

import asyncio
import subprocess
import sys
import threading
import time

from _ready import ready


def _wait_then(arg: str) -> None:
    if arg == "outside":  # a wait on a process off the loop, which will answer
        subprocess.run(["sh", "-c", "sleep 600; echo go"], capture_output=True, check=True)
    else:
        time.sleep(600 if arg == "twin" else float(arg))


async def main(arg: str) -> None:
    if sys.version_info < (3, 12):  # (3.12 and later poll a pidfd; before, a thread waits in waitpid)
        asyncio.set_child_watcher(asyncio.ThreadedChildWatcher())
    proc = await asyncio.create_subprocess_exec("cat", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    if arg == "serve":  # a server for clients that keeps its worker: a client may come, and the loop goes on
        server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
        ready()
        await server.serve_forever()
    if arg != "hang":
        loop = asyncio.get_running_loop()

        def close_later() -> None:
            _wait_then(arg)
            loop.call_soon_threadsafe(proc.stdin.close)

        threading.Thread(target=close_later, name="closer", daemon=True).start()
    ready()
    out, _ = await proc.communicate(None)
    print("done", len(out), flush=True)


if __name__ == "__main__":
    # (an awaiting coroutine is on no thread's stack: the place is the loop's caller)
    asyncio.run(main(sys.argv[1]))  # HANG-HERE

"""An async data service awaits a local server's answer that comes late: the loop sleeps in epoll_wait meanwhile.

report: https://github.com/python/cpython/issues/112741
saw: an event loop parked in epoll_wait is a hang only if nothing it watches can wake it.
mechanism: healthy: the loop watches a socket to a server (a child) that prepares its answer for a while, asleep in pieces, then sends it; the await returns.
expect: healthy
"""
import asyncio
import multiprocessing as mp
import socket
import time

from _zoo import ready, seconds


def server(sock):
    for _ in range(int(seconds(20))):
        time.sleep(1)  # preparing the shard index
    sock.sendall(b"shard-index 42\n")


async def fetch_shard(sock):
    reader, _writer = await asyncio.open_connection(sock=sock)
    ready()
    return await reader.readline()


if __name__ == "__main__":
    mine, theirs = socket.socketpair()
    child = mp.get_context("fork").Process(target=server, args=(theirs,))
    child.start()
    theirs.close()
    print(asyncio.run(fetch_shard(mine)).decode().strip(), flush=True)
    child.join()

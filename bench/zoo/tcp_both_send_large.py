"""A trainer and a local evaluation server each send the other a large message before reading: both sends block.

report: https://github.com/python/cpython/issues/86679
also: https://github.com/initc3/HoneyBadgerMPC/pull/148
saw: IPC over sockets deadlocked: "sockets are not draining or something and deadlocks anyway".
mechanism: over TCP on 127.0.0.1 each side's sendall() waits for room in its send buffer, which frees only when the other side reads; neither reads until its own send returns.
expect: hung process.waits_on
accept: io.network_wait, code.deadlock
"""
import multiprocessing as mp
import socket

from _zoo import ready

SIZE = 32 << 20  # far past both sides' socket buffers


def eval_server(listener):
    conn, _ = listener.accept()
    conn.sendall(b"m" * SIZE)  # HANG-HERE (the metrics, before reading the checkpoint)
    conn.recv(1 << 20)


if __name__ == "__main__":
    listener = socket.create_server(("127.0.0.1", 0))
    server = mp.get_context("fork").Process(target=eval_server, args=(listener,))
    server.start()
    sock = socket.create_connection(listener.getsockname())
    listener.close()
    ready()
    sock.sendall(b"c" * SIZE)  # HANG-HERE (the checkpoint, before reading the metrics)
    sock.recv(1 << 20)

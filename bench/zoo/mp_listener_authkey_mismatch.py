"""A trainer fetches its config from a control server it runs on a thread of its own, through multiprocessing.connection;
the client has the job's authkey, the listener none: each waits for the other to speak first.

report: https://github.com/python/cpython/issues/123736
saw: "Client(authkey) waits for a challenge; Listener() without a key waits for a request": both block in recv.
mechanism: the client's recv of the challenge and the server thread's recv of the request each read a loopback socket
whose other end only the process holds, and the one thread that could write to each is the other reader.
expect: hung code.deadlock
accept: process.waits_on, io.network_wait
"""
import hashlib
import socket
import threading
import time
from multiprocessing.connection import Client, Listener

from _zoo import ready as zoo_ready
from _zoo import seconds

TWIN = False
SECRET = b"job-shared-secret"


def free_address():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()


def load_config():
    # Stand-in for reading/validating a big config: ~18 s of pure CPU.
    h, deadline = b"cfg", time.monotonic() + seconds(18)
    while time.monotonic() < deadline:
        for _ in range(2000):
            h = hashlib.sha256(h).digest()
    return {"lr": 3e-4, "batch_size": 64, "digest": h.hex()[:8]}


def control_server(address, listener_key, ready):
    with Listener(address, authkey=listener_key) as listener:
        ready.set()
        config = load_config() if TWIN else {"lr": 3e-4, "batch_size": 64}
        with listener.accept() as conn:
            while True:
                request = conn.recv()          # server side waits here
                if request == "bye":
                    break
                conn.send(config)


def main():
    address = free_address()
    listener_key = SECRET if TWIN else None   # the bug: server has no key
    ready = threading.Event()
    threading.Thread(target=control_server, args=(address, listener_key, ready),
                     daemon=True, name="control-server").start()
    ready.wait()
    print("fetching job config from", address, flush=True)
    zoo_ready()
    with Client(address, authkey=SECRET) as conn:  # HANG-HERE
        conn.send("get_config")
        config = conn.recv()
        conn.send("bye")
    print("config:", config, flush=True)


if __name__ == "__main__":
    main()

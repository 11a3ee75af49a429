"""A trainer fetches its config from a control server it runs on a thread of its own; the server loads the config
(CPU) before it accepts, so the client waits in its handshake meanwhile.

report: https://github.com/python/cpython/issues/123736
saw: a client waiting for its own server's answer is a hang only if no thread of it can answer.
mechanism: healthy: the same keys; the server thread computes, then accepts and answers.
expect: healthy
"""
import hashlib
import socket
import threading
import time
from multiprocessing.connection import Client, Listener

from _zoo import ready as zoo_ready
from _zoo import seconds

TWIN = True
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
    with Client(address, authkey=SECRET) as conn:
        conn.send("get_config")
        config = conn.recv()
        conn.send("bye")
    print("config:", config, flush=True)


if __name__ == "__main__":
    main()

"""The same finish() over a socket, while the service's uploader, alive, still uploads (and then answers).

report: https://github.com/wandb/wandb/issues/4441
saw: "it is just very very slow at uploading data to the cloud dashboard, like 15-20 minute per run".
mechanism: healthy: the training process reads the service's answer with no timeout while the uploader thread hashes and sends chunks (CPU and bytes move), then sets flushed; the service answers.
expect: healthy
"""
import hashlib
import os
import socket
import subprocess
import sys
import threading
import time

from _zoo import ready, seconds


def service(fd, s):
    conn = socket.socket(fileno=fd)
    flushed = threading.Event()

    def uploader():
        digest, deadline = b"", time.monotonic() + s
        while time.monotonic() < deadline:
            for _ in range(20000):
                digest = hashlib.sha256(digest + b"chunk").digest()
            time.sleep(0.05)  # waits for the network between chunks
        flushed.set()

    threading.Thread(target=uploader, name="uploader", daemon=True).start()
    while True:
        request = conn.recv(100)
        if not request:
            return
        flushed.wait()
        conn.sendall(b"finished\n")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        service(int(sys.argv[1]), float(sys.argv[2]))
        sys.exit(0)
    mine, theirs = socket.socketpair()
    svc = subprocess.Popen([sys.executable, os.path.abspath(__file__), str(theirs.fileno()), str(seconds(40))],
                           pass_fds=(theirs.fileno(),))
    theirs.close()
    for step in range(3):
        print(f"step {step} loss {1.0 / (step + 1):.3f}", flush=True)
    mine.sendall(b"finish\n")
    print("wandb: Waiting for W&B process to finish... (success).", flush=True)
    ready()
    print("finished:", mine.recv(100), flush=True)
    mine.close()
    svc.wait(timeout=30)

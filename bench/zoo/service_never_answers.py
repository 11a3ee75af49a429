"""wandb.finish() waits forever for its service, whose uploader thread died: nothing will ever answer.

report: https://github.com/wandb/wandb/issues/4929
also: https://github.com/wandb/wandb/issues/5601
saw: "the program is still stuck for a very long time" at wandb.finish(); "I have to kill wandb-service to make it disappear".
mechanism: the training process sends "finish" to its logging service over a socket and reads the answer with no timeout; the service waits (no timeout) for its uploader thread to flush, and that thread died of an exception, so no thread left can answer.
expect: hung code.deadlock
accept: process.waits_on
"""
import os
import socket
import subprocess
import sys
import threading

from _zoo import ready


def service(fd):
    conn = socket.socket(fileno=fd)
    flushed = threading.Event()

    def uploader():
        raise ConnectionResetError("upload stream reset by peer")  # the thread ends; flushed is never set

    threading.Thread(target=uploader, name="uploader", daemon=True).start()
    while True:
        request = conn.recv(100)
        if not request:
            return
        flushed.wait()  # HANG-HERE: waits for the uploader, with no timeout
        conn.sendall(b"finished\n")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        service(int(sys.argv[1]))
        sys.exit(0)
    mine, theirs = socket.socketpair()
    svc = subprocess.Popen([sys.executable, os.path.abspath(__file__), str(theirs.fileno())],
                           pass_fds=(theirs.fileno(),))
    theirs.close()
    for step in range(3):
        print(f"step {step} loss {1.0 / (step + 1):.3f}", flush=True)
    mine.sendall(b"finish\n")
    print("wandb: Waiting for W&B process to finish... (success).", flush=True)
    ready()
    answer = mine.recv(100)  # reads the service's answer with no timeout
    print("finished:", answer, flush=True)

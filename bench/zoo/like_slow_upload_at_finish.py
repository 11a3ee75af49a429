"""A tracker uploading its files at the end of training: "stuck" at "Waiting for W&B process to finish".

report: https://github.com/wandb/wandb/issues/4441
also: https://github.com/wandb/wandb/issues/4929
saw: stuck at "Waiting for W&B process to finish... (success)"; a commenter: "it is just very very slow at uploading data".
mechanism: healthy: the upload's bytes move, slowly, to a server that reads them at its own pace.
expect: healthy
"""
import socket
import threading
import time

from _zoo import ready, seconds


def slow_reader(srv, per_read, pause):
    conn, _ = srv.accept()
    while conn.recv(per_read):
        time.sleep(pause)


if __name__ == "__main__":
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    total = 8 << 20
    threading.Thread(target=slow_reader, args=(srv, 64 << 10, seconds(30) / 128), daemon=True).start()
    print("training done. Waiting for W&B process to finish... (success)", flush=True)
    ready()
    with socket.create_connection(srv.getsockname()) as c:
        c.sendall(b"x" * total)
    print("run synced", flush=True)

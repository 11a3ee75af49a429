"""A trainer runs its eval through a shell with subprocess.run(); the eval (a grandchild) reports its metrics to the
trainer's metrics socket and waits for the acknowledgement. `python socket_not_accepted.py hang`: the trainer serves
the socket only after run() returns: the eval's connection sits in the listener's accept queue, and the trainer waits
for the shell, which waits for the eval: a cycle. `python socket_not_accepted.py SECONDS`: a thread of the trainer
serves the socket, and the eval computes for SECONDS first; the job ends."""

import socket
import subprocess
import sys
import threading

EVAL = """import socket, sys, time
time.sleep({seconds})
s = socket.create_connection(("127.0.0.1", {port}))
s.sendall(b"eval_loss=1\\n")
sys.exit(0 if s.recv(16) == b"ok\\n" else 1)
"""


def serve(server: socket.socket) -> None:
    conn, _ = server.accept()
    with conn:
        conn.recv(4096)
        conn.sendall(b"ok\n")


if __name__ == "__main__":
    hang = sys.argv[1] == "hang"
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    if not hang:
        threading.Thread(target=serve, args=(server,), name="metrics-server", daemon=True).start()
    code = EVAL.format(seconds=0.5 if hang else float(sys.argv[1]), port=port)
    out = subprocess.run(["bash", "-c", f"\"{sys.executable}\" -c '{code}'; echo \"eval exited $?\""], capture_output=True, text=True)  # HANG-HERE
    if hang:
        serve(server)
    print(out.stdout.strip(), flush=True)
    print("done", flush=True)

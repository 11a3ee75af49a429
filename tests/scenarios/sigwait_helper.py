"""The main thread blocks SIGUSR1 and waits for it in signal.sigwait(); a helper process is to send it when its work
is done. `python sigwait_helper.py hang`: the helper exits first, without sending it (a process outside the job could
still send one: nothing proves the wait never ends); `python sigwait_helper.py SECONDS`: the helper works SECONDS, then
sends it; `python sigwait_helper.py timed SECONDS`: no helper, and the main thread polls for the signal with
signal.sigtimedwait(..., SECONDS), then goes on. `python sigwait_helper.py chld hang`: it counts two helpers' ends with
sigwait(SIGCHLD), but they ended together and one SIGCHLD came for both (a blocked standard signal is not queued
twice): nothing in the job can send another; `python sigwait_helper.py chld SECONDS`: one helper works SECONDS, then
its end's SIGCHLD ends the wait. `python sigwait_helper.py listener PORT`: a helper child blocks SIGTERM and waits for
it in sigwait() (a shutdown listener) while the main process waits for a server outside the job, at 127.0.0.1:PORT,
to answer; then it ends the helper with SIGTERM: a sigwait for a signal that a living process of the job will send."""

import os
import signal
import subprocess
import sys
import time

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGCHLD})
if sys.argv[1] == "chld":
    hang = sys.argv[2] == "hang"
    work = "pass" if hang else f"import time; time.sleep({float(sys.argv[2])})"
    helpers = [subprocess.Popen([sys.executable, "-c", work]) for _ in range(2 if hang else 1)]
    if hang:
        time.sleep(2)  # both end before the first wait
    for _ in helpers:
        signal.sigwait({signal.SIGCHLD})  # CHLD-HERE
    print("done", flush=True)
    sys.exit(0)
if sys.argv[1] == "listener":
    import socket

    code = "import signal; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); signal.sigwait({signal.SIGTERM})"
    listener = subprocess.Popen([sys.executable, "-c", code])  # LISTENER-HERE
    with socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=60) as s:
        s.settimeout(None)  # a blocking read: no timer of its own
        print("answer:", s.recv(16), flush=True)
    listener.terminate()
    listener.wait(timeout=30)
    print("done", flush=True)
    sys.exit(0)
if sys.argv[1] == "timed":
    print("polled:", signal.sigtimedwait({signal.SIGUSR1}, float(sys.argv[2])), flush=True)  # TIMED-HERE
    print("done", flush=True)
    sys.exit(0)
work = "raise SystemExit(3)" if sys.argv[1] == "hang" else f"time.sleep({float(sys.argv[1])})"
helper = subprocess.Popen(
    [sys.executable, "-c", f"import os, signal, time; {work}; os.kill({os.getpid()}, signal.SIGUSR1)"]
)
signal.sigwait({signal.SIGUSR1})  # HANG-HERE
helper.wait(timeout=30)
print("done", flush=True)

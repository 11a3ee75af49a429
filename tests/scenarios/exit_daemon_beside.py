"""At exit, a daemon consumer thread waits on its queue for ever (the exit does not join it) beside a thread the exit
does join. `python exit_daemon_beside.py SECONDS`: that thread uploads for SECONDS, then ends, and so does the job;
`python exit_daemon_beside.py hang`: it waits on an Event nobody sets, and the exit never ends. A third argument
`hidden` starts the consumer through a helper whose daemon flag is a variable: no reading of the source says it is a
daemon."""

import queue
import sys
import threading
import time

work: queue.Queue = queue.Queue()
stop = threading.Event()


def consume():
    while True:
        print(work.get(), flush=True)  # a daemon: nobody puts any more


def consume_quietly():  # the same, started where no reading of the source tells it is a daemon
    while True:
        print(work.get(), flush=True)


def upload():
    for _ in range(int(sys.argv[1])):
        time.sleep(1.0)
    print("upload done", flush=True)


def monitor():
    stop.wait()  # nobody sets it  # HANG-HERE


def start(fn, daemon):
    threading.Thread(target=fn, daemon=daemon).start()


if __name__ == "__main__":
    if sys.argv[2:] == ["hidden"]:
        start(consume_quietly, daemon=len(sys.argv) > 0)
    else:
        threading.Thread(target=consume, daemon=True).start()
    threading.Thread(target=monitor if sys.argv[1] == "hang" else upload).start()
    for step in range(3):
        print(f"step {step}", flush=True)
        time.sleep(0.2)

"""The same process controller: it checks `is_running`, does its housekeeping and pauses; the preemption notice arrives while it pauses, and it stops.

report: https://github.com/gmr/rejected/issues/89
saw: the controller sits in signal.pause() for a long while; here the SIGTERM comes after pause() was entered.
mechanism: healthy: the scheduler's notice (a child asleep ~25 s) sends SIGTERM while the main thread is in pause(); the handler stops the consumers and clears is_running, pause() returns, the loop ends and the controller exits 0.
expect: healthy
"""
import os
import signal
import subprocess
import sys
import time

from _zoo import ready, seconds


class MasterControlProgram:
    def __init__(self, notice_s):
        self.is_running = True
        self.consumers = []
        self.notice_s = notice_s

    def start(self):
        signal.signal(signal.SIGTERM, self.on_sigterm)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes pause() when a consumer dies
        for i in range(2):  # the consumer processes (native stand-ins)
            self.consumers.append(subprocess.Popen(["sleep", "100000"]))
        # the scheduler's preemption notice: SIGTERM to this process, later
        self.notice = subprocess.Popen(["sh", "-c", f"sleep {self.notice_s:.1f}; kill -TERM $PPID"])

    def on_sigterm(self, signum, frame):
        self.stop_processes()

    def stop_processes(self):
        print("SIGTERM: stopping consumers", flush=True)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        for p in self.consumers:
            p.terminate()
            p.wait()
        self.notice.wait()
        self.is_running = False

    def write_stats(self):  # housekeeping between the check and the pause
        with open(os.devnull, "w") as f:
            for _ in range(25):
                f.write(f"consumers={len(self.consumers)}\n")
                time.sleep(0.1)  # poll each consumer's counters

    def run(self):
        self.start()
        while self.is_running:
            self.write_stats()
            ready()
            signal.pause()
        print("stopped", flush=True)


if __name__ == "__main__":
    MasterControlProgram(seconds(25)).run()
    sys.exit(0)

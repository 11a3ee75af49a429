"""A process controller checks `is_running`, does its housekeeping, then signal.pause()s: the SIGTERM came during the housekeeping, its handler already stopped everything, and nothing is left to wake the pause.

report: https://github.com/gmr/rejected/issues/89
also: https://github.com/python/cpython/issues/100557 (pause() returns only for a signal a handler catches)
saw: "`run()` does `while self.is_running: ... signal.pause()`. If SIGTERM or SIGHUP is delivered after the `while self.is_running` evaluation but before the `pause()` syscall is entered, the controller's handler runs `stop_processes()` to completion ... and then the main thread enters `pause()` with no remaining signal source. All children are dead and no timer is armed, so nothing ever wakes it; the process appears hung".
mechanism: a lost wake-up: Python runs the SIGTERM handler between bytecodes of the main thread, here inside the housekeeping that follows the loop's check; the handler terminates and reaps the consumers, sets SIGCHLD to SIG_IGN and clears is_running. The loop body then calls pause() anyway: the handler for SIGTERM is still installed, but no child, timer or process of the job is left to send any signal.
expect: hung process.waits_on
"""
import os
import signal
import subprocess
import sys
import time

from _zoo import ready


class MasterControlProgram:
    def __init__(self):
        self.is_running = True
        self.consumers = []

    def start(self):
        signal.signal(signal.SIGTERM, self.on_sigterm)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes pause() when a consumer dies
        for i in range(2):  # the consumer processes (native stand-ins)
            self.consumers.append(subprocess.Popen(["sleep", "100000"]))
        # the scheduler's preemption notice: SIGTERM to this process, shortly after start
        self.notice = subprocess.Popen(["sh", "-c", "sleep 0.5; kill -TERM $PPID"])

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
            self.write_stats()  # the SIGTERM arrives in here
            ready()
            signal.pause()  # HANG-HERE
        print("stopped", flush=True)


if __name__ == "__main__":
    MasterControlProgram().run()
    sys.exit(0)

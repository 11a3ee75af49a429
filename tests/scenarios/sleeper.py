"""A job in a long sleep, an hour: code.long_sleep; SIGSTOPped, process.stopped; with HW_ALARM_HANDLER=1, unknown."""

import time

from _ready import ready


def wait_for_gpu_slot():
    ready()
    time.sleep(3600)  # HANG-HERE


def _late(signum, frame):
    raise TimeoutError


if __name__ == "__main__":
    # With HW_ALARM_HANDLER=1 it first installs a SIGALRM handler, as signal.alarm's timeout idiom does: a handler may
    # end the sleep (past --max-slow otherwise: proven), so nothing proves it and nothing known names it: unknown.
    import os
    import signal

    if os.environ.get("HW_ALARM_HANDLER") == "1":
        signal.signal(signal.SIGALRM, _late)
    wait_for_gpu_slot()

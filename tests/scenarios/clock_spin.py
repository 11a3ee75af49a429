"""Busy waits that end by themselves: `clock` spins on `while time.monotonic() < until` (the condition calls the clock,
so it turns with no local changing) and `range` counts through a range sized to take the same time (a range ends at
its stop). Steps before and after; "done" at the end. `python clock_spin.py MODE SECONDS`."""

import sys
import time


def wait_on_the_clock(seconds):
    until, spins = time.monotonic() + seconds, 0
    while time.monotonic() < until:  # SPIN-HERE:clock
        spins += 1
    return spins


def count_through(n):
    for i in range(n):  # SPIN-HERE:range
        pass
    return n


def rate():
    """Iterations of an empty range loop a CPU second, measured here over 0.3 s of this process's CPU: on a loaded
    machine a wall-clock rate is too low, and the loop then ends too soon to be looked at once the load is gone."""
    t0, n = time.process_time(), 0
    while time.process_time() - t0 < 0.3:
        n += count_through(1_000_000)
    return n / (time.process_time() - t0)


if __name__ == "__main__":
    mode, seconds = sys.argv[1], float(sys.argv[2])
    for step in range(10):
        print(f"step {step}", flush=True)
        time.sleep(0.05)
    if mode == "clock":
        wait_on_the_clock(seconds)
    else:
        count_through(int(rate() * seconds))
    for step in range(10, 13):
        print(f"step {step}", flush=True)
        time.sleep(0.05)
    print("done", flush=True)

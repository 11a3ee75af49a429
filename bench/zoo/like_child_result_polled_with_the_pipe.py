"""Look-alike of child_result_larger_than_pipe_polled_alive: the calibration takes ~15 s in the child, and the parent's poll loop also checks the pipe, so the large result is read as soon as it is sent.

report: https://github.com/DrA1ex/ff5m/pull/70 (DrA1ex/ff5m#70: `if parent_conn.poll(): break` inside the wait loop)
mechanism: the child computes for ~15 s (asleep in pieces here, no output), then sends the ~350 KB table. The parent
  polls every 0.2 s, as before, but breaks out as soon as the pipe has data; recv() drains the pipe, the child's send
  completes and it exits, and the parent joins it.
diagnosis: healthy: a parent polling a child that is working, and reading its result when it comes.
expect: healthy
"""
import multiprocessing as mp
import time

from _zoo import ready, seconds


def calibrate(conn):
    deadline = time.monotonic() + seconds(15)  # sweep the frequencies, sample the accelerometer
    while time.monotonic() < deadline:
        time.sleep(0.5)
    freqs = [5.0 + 0.025 * i for i in range(16000)]
    psd = [(f, (f % 7.0) * 1e3, (f % 5.0) * 1e3) for f in freqs]
    conn.send((False, psd))
    conn.close()


if __name__ == "__main__":
    parent_conn, child_conn = mp.Pipe(duplex=False)
    proc = mp.Process(target=calibrate, args=(child_conn,), name="calibrate")
    proc.start()
    print("// Wait for calculations..", flush=True)
    ready()
    while proc.is_alive():
        if parent_conn.poll():
            break
        time.sleep(0.2)
    is_err, res = parent_conn.recv()
    proc.join()
    print(f"calibrated: {len(res)} points", flush=True)

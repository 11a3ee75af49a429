"""A calibration runs in a child process; the parent polls is_alive() before it reads the result, and a result larger than the pipe buffer keeps the child alive for ever.

report: https://github.com/DrA1ex/ff5m/pull/70 (DrA1ex/ff5m#70, "Fix SHAPER_CALIBRATE deadlock when the result exceeds the pipe buffer")
also: https://github.com/domainaware/parsedmarc/pull/508 ("bringing conn.recv() before proc.join()")
saw: "ZSHAPER / SHAPER_CALIBRATE hangs forever after `// Wait for calculations..` ... CPU idle, no result, no error";
  the parent loops `while calc_proc.is_alive(): ... reactor.pause ...` and calls parent_conn.recv() only after it.
mechanism: the child ends with child_conn.send(result). multiprocessing.Connection.send writes synchronously (no
  feeder thread), so a ~350 KB pickle blocks in write() once the 64 KiB pipe is full, until the parent reads. The
  parent reads only after the child has exited, and meanwhile sleeps 0.2 s per poll: alive, nearly idle, and never
  reading. The child waits on the pipe, the parent on the child.
diagnosis: hung, child.wait: the main thread's poll loop `while proc.is_alive()` at child_result_larger_than_pipe_polled_alive.py:36-37 (asleep at
  child_result_larger_than_pipe_polled_alive.py:37) waits for the "calibrate" child, which is blocked in Connection.send at child_result_larger_than_pipe_polled_alive.py:26 writing to
  the pipe that only the parent's parent_conn.recv() at child_result_larger_than_pipe_polled_alive.py:38 would drain.
expect: hung child.wait
accept: process.waits_on
"""
import multiprocessing as mp
import time

from _zoo import ready


def calibrate(conn):
    freqs = [5.0 + 0.025 * i for i in range(16000)]
    psd = [(f, (f % 7.0) * 1e3, (f % 5.0) * 1e3) for f in freqs]  # the resonance table: ~350 KB pickled
    conn.send((False, psd))
    conn.close()


if __name__ == "__main__":
    parent_conn, child_conn = mp.Pipe(duplex=False)
    proc = mp.Process(target=calibrate, args=(child_conn,), name="calibrate")
    proc.start()
    print("// Wait for calculations..", flush=True)
    ready()
    while proc.is_alive():
        time.sleep(0.2)  # HANG-HERE
    is_err, res = parent_conn.recv()
    proc.join()
    print(f"calibrated: {len(res)} points", flush=True)

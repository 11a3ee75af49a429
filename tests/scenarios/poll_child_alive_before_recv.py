"""A calibration runs in a child process; the parent polls is_alive() and reads the result only after the child has
exited (DrA1ex/ff5m#70). `python poll_child_alive_before_recv.py hang`: the result is larger than the pipe's buffer,
so the child blocks in Connection.send until the parent reads, and the parent's loop only sleeps until the child ends:
each waits for the other. `... SECONDS`: the child computes for SECONDS (asleep in pieces) and sends a small result,
which the pipe holds: it exits, the loop ends, and the job says `done`."""

import multiprocessing as mp
import sys
import time


def calibrate(conn, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.25)
    size = 16000 if seconds == 0 else 10  # the resonance table: about 350 KB pickled, or a few bytes
    conn.send([(5.0 + 0.025 * i, (i % 7) * 1e3, (i % 5) * 1e3) for i in range(size)])
    conn.close()


if __name__ == "__main__":
    mp.set_start_method("fork")
    parent_conn, child_conn = mp.Pipe(duplex=False)
    seconds = 0.0 if sys.argv[1:] == ["hang"] else float(sys.argv[1])
    proc = mp.Process(target=calibrate, args=(child_conn, seconds), name="calibrate")
    proc.start()
    print("waiting for the calibration", flush=True)
    while proc.is_alive():
        time.sleep(0.2)  # HANG-HERE
    result = parent_conn.recv()
    proc.join()
    print(f"calibrated: {len(result)} points; done", flush=True)

"""A `spawn` Pool whose tasks each run a native command (`sleep` stands for ffmpeg, a tokenizer build): the parent's
children are the pool's workers and multiprocessing's resource tracker, which the parent never waits for.
argv[1]: the command's seconds (12: the job ends, exit 0; 100000: a timer past every bound, it never ends)."""

import multiprocessing as mp
import subprocess
import sys
import time


def task(i: int) -> int:
    subprocess.run(["sleep", sys.argv[1]], check=True)  # HANG-HERE
    return i


if __name__ == "__main__":
    for step in range(5):
        print(f"step {step}", flush=True)
        time.sleep(0.3)
    with mp.get_context("spawn").Pool(2) as pool:
        print(pool.map(task, range(2)), flush=True)
    print("done", flush=True)

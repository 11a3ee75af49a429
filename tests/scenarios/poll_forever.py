"""Fast steps, then the main process polls for a file that never appears (a sleep loop with no named target):
it only wakes, and shows no work. Such a job is judged by its step history."""

import os
import time

from _ready import ready

if __name__ == "__main__":
    for step in range(80):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    ready()
    while not os.path.exists("/nonexistent/the-shard-that-never-comes"):
        time.sleep(0.2)  # HANG-HERE

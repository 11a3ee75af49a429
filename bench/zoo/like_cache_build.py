"""Building a dataset's cache ("Generating train split"): silent for a long time, CPU busy, the cache file grows.

report: https://github.com/huggingface/datasets/issues/7080
also: https://github.com/huggingface/datasets/issues/6077
saw: "Loading a simple webdataset takes ~45 minutes" in "Generating train split"; "Mapping gets stuck at 99%" while the cache was written.
mechanism: healthy: a generator's examples are encoded and written to the cache file, with no output (datasets itself is not installed here: the same loop writes a file).
expect: healthy
"""
import os
import pickle
import tempfile
import time

from _zoo import ready, seconds

if __name__ == "__main__":
    path = os.path.join(tempfile.gettempdir(), f"zoo-cache-{os.getpid()}.arrow")
    print("Generating train split", flush=True)
    ready()
    end, n = time.time() + seconds(30), 0
    with open(path, "wb") as f:
        while time.time() < end:
            rows = [{"text": "x" * (i % 300), "label": i % 7} for i in range(2000)]
            f.write(pickle.dumps(rows))
            n += len(rows)
    os.unlink(path)
    print(f"Generated {n} examples; training", flush=True)

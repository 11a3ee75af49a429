"""Fast steps (0.05 s), then a silent metric computation in the main process: a Python loop over the
validation predictions that prints nothing, then fast steps again. argv[1]: seconds the computation
takes (-1: it never ends). No torch: the loop is plain Python, as most metric code is."""

import random
import sys
import time

from _ready import ready

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 150.0


def compute_metrics(preds, labels):
    correct, seen, t0 = 0, 0, time.monotonic()
    while True:
        for p, label in zip(preds, labels, strict=True):  # HANG-HERE
            correct += p == label
            seen += 1
        if 0 <= SECONDS < time.monotonic() - t0:
            return correct / seen


def main():
    rng = random.Random(0)
    for step in range(80):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    ready()
    preds = [rng.randrange(10) for _ in range(50_000)]
    labels = [rng.randrange(10) for _ in range(50_000)]
    print(f"accuracy {compute_metrics(preds, labels):.3f}", flush=True)
    for step in range(80, 100):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    main()

"""Fast steps (0.05 s), then a silent loop at the module's top level, where py-spy reads no locals.
argv[1]: `walk`: a metric loop over the predictions (several lines, so its stack moves) that ends after
argv[2] seconds, then fast steps again; `spin`: a one-line spin that never ends (the same line in every
sample)."""

import sys
import time

from _ready import ready

if __name__ == "__main__":
    mode = sys.argv[1]
    for step in range(40):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    ready()
    if mode == "spin":
        while time.time() > 0: pass  # HANG-HERE:spin
    preds = [i % 7 for i in range(10**5)]
    labels = [i % 5 for i in range(10**5)]
    end, hits, seen = time.monotonic() + float(sys.argv[2]), 0, 0
    while time.monotonic() < end:
        for p, label in zip(preds, labels, strict=True):  # HANG-HERE:walk
            hit = p == label
            hits += hit
            seen += 1
    print(f"accuracy {hits / seen:.3f}", flush=True)
    for step in range(40, 50):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    print("done", flush=True)

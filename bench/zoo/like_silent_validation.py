"""A long silent validation after fast training steps: "the program gets stuck" - it was evaluating.

report: https://github.com/open-mmlab/mmsegmentation/issues/66
also: https://github.com/memray/seq2seq-keyphrase-pytorch/issues/16
saw: "when the validate is over, the program gets stuck"; the maintainer: "It takes a while to evaluate in distributed mode" (4545 s in the reporter's run).
mechanism: healthy: a metric computed in a Python loop over the predictions prints nothing for minutes while its loop walks the data.
expect: healthy
"""
import time

from _zoo import ready, seconds

if __name__ == "__main__":
    for step in range(40):
        time.sleep(0.05)
        print(f"step {step}", flush=True)
    print("evaluating", flush=True)
    ready()
    preds = [i % 7 for i in range(10**6)]
    labels = [i % 5 for i in range(10**6)]
    end, hits, rounds = time.time() + seconds(150), 0, 0
    while time.time() < end:  # mIoU over the whole validation set, class by class
        for p, l in zip(preds, labels):
            hits += p == l
        rounds += 1
    print(f"mIoU {hits / (rounds * len(preds)):.3f}", flush=True)

"""Training output redirected to a file without flushing: the log stays empty while training runs.

report: https://github.com/zczcwh/PoseFormer/issues/28
also: https://github.com/TsingZ0/PFLlib/issues/195
saw: "Tried output redirection to store training log yet produced an empty file"; nohup.out held only "ignoring input" (the fix: python -u).
mechanism: healthy: stdout to a file is block-buffered, so nothing reaches the log until the buffer fills; the steps advance.
expect: healthy
env: PYTHONUNBUFFERED=
"""
import sys
import time

from _zoo import ready, seconds

if __name__ == "__main__":
    sys.stdout = open(sys.stdout.fileno(), "w", buffering=8192, closefd=False)  # what a redirect gets
    ready()
    steps = int(seconds(30) / 0.25)
    for step in range(steps):
        time.sleep(0.25)
        print(f"epoch 0 step {step} loss {1 / (step + 1):.4f}")
    print("done")

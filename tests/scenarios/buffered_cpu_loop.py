"""Healthy: a CPU-bound loop whose counter grows all the time, printing into a block-buffered file
(the empty-log, 100 % CPU question: an infinite loop, or buffering?)."""

from _ready import ready


def train():
    step = 0
    while True:
        step += 1
        acc = 0
        for k in range(20000):  # LOOP-HERE
            acc += k * k
        if step % 50 == 0:
            print(f"step {step} acc {acc}")
        if step == 20:
            ready()


if __name__ == "__main__":
    train()

"""A training loop that makes progress and prints every step, with stdout going to a file."""

import math
import random

from _ready import ready


def load_batch(step):
    return [random.random() for _ in range(200000)]


def forward(batch):
    return [math.tanh(x * 1.7) for x in batch]


def compute_loss(out):
    return sum(o * o for o in out) / len(out)


def backward(out, loss):
    return [2 * o * loss for o in out]


def optimizer_step(grads, weights):
    return [w - 0.01 * g for w, g in zip(weights, grads, strict=False)]


def train():
    weights = [0.0] * 200000
    step = 0
    while True:
        batch = load_batch(step)
        out = forward(batch)
        loss = compute_loss(out)
        grads = backward(out, loss)
        weights = optimizer_step(grads, weights)
        print(f"step {step} loss {loss:.4f}")
        step += 1
        if step == 5:
            ready()


if __name__ == "__main__":
    train()

"""A forgotten breakpoint() before the training loop."""

from _ready import ready

config = {"lr": 3e-4}
ready()
breakpoint()
print("training with", config)  # HANG-HERE

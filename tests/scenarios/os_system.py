"""The job shells out with os.system to a preprocessing command that never finishes."""

import os

from _ready import ready


def build_index():
    ready()
    os.system("sleep 600")  # HANG-HERE


if __name__ == "__main__":
    build_index()

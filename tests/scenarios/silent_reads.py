"""Silent work: reads a small file again and again for SECONDS (argv[1], default 20) and prints nothing until it is
done, the job a person looks at with strace or gdb while it works."""

import sys
import time

from _ready import ready


def main(seconds: float) -> None:
    ready()
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        with open(__file__, "rb") as f:  # HANG-HERE
            f.read()
        n += 1
    print(f"done after {n} reads", flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 20.0)

"""A helper loop's select over the sockets it was to be given, none given, with no timeout: only a signal could end
it, and the process handles none that would let it go on. `python signal_wait_nothing.py hang`; `python
signal_wait_nothing.py SECONDS`: the same select with a timeout of SECONDS, and the job ends."""

import select
import sys

select.select([], [], [], None if sys.argv[1] == "hang" else float(sys.argv[1]))  # HANG-HERE
print("done", flush=True)

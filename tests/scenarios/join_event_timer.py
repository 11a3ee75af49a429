"""The main thread joins a worker thread that waits for an Event; a threading.Timer was to set it.
`python join_event_timer.py hang`: no Timer was started (its start was skipped), so nothing sets it;
`python join_event_timer.py SECONDS`: the Timer sets it after SECONDS, the join ends and the job ends."""

import sys
import threading

ready = threading.Event()


def worker() -> None:
    ready.wait()  # HANG-HERE


t = threading.Thread(target=worker, name="uploader")
t.start()
if sys.argv[1] != "hang":
    threading.Timer(float(sys.argv[1]), ready.set).start()
t.join()
print("done", flush=True)

"""A sidecar that runs until it is killed, ended by the job on a timer. `python sidecar_ended_by_a_timer.py
SECONDS KIND`: main starts the sidecar (KIND `sleep`: `sleep infinity`; `pause`: a Python child in signal.pause(); `nap`:
`sleep 100000`; `event`: a Python child waiting on an Event nothing sets), arms a threading.Timer to terminate it after SECONDS, and waits for it: the job ends. `python
sidecar_ended_by_a_timer.py hang KIND`: no Timer is armed, and main waits for the sidecar for ever."""

import subprocess
import sys
import threading

SIDECARS = {
    "sleep": ["sleep", "infinity"],
    "pause": [sys.executable, "-c", "import signal; signal.pause()"],
    "nap": ["sleep", "100000"],
    "event": [sys.executable, "-c", "import threading; threading.Event().wait()"],
}
sidecar = subprocess.Popen(SIDECARS[sys.argv[2]])
if sys.argv[1] != "hang":
    threading.Timer(float(sys.argv[1]), sidecar.terminate).start()
print("waiting for the sidecar", flush=True)
sidecar.wait()  # HANG-HERE
print("done", flush=True)

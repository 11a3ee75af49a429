"""A thread that waits on a module's import lock (issue [1/5], first sight: CPython's warning that a thread started
at import time can deadlock). Both ways on real processes: a module that starts a thread at its top level and joins
it, while the thread imports that very module, is proven hung and said to be the import lock; its twin's thread
waits on the import lock of a module another thread is importing slowly (asleep on a timer, or reading a pipe a
child writes later): not proven."""

from __future__ import annotations

import sys

import pytest
from conftest import inspect_json, root_cause

READY = "import os\nwith open(os.environ['HW_READY'], 'a') as f:\n    f.write(f'ready {os.getpid()}\\n')\n"
WAIT_BEGUN = (
    "deadline = time.monotonic() + 10\nwhile not os.path.exists(os.path.join({d!r}, 'begun')) and "
    "time.monotonic() < deadline:\n    time.sleep(0.01)\n"  # (the first thread holds the module's lock now)
)
MAIN = {
    # the module's top level starts the scan and joins it; the scan imports the module being imported
    "hang": "import sys\nsys.path.insert(0, {d!r})\nimport registry\n",
    # the scan imports a module another thread imports slowly (its top level sleeps 600 s): the lock's holder lives
    "twin": "import os, sys, threading, time\nsys.path.insert(0, {d!r})\n"
    "threading.Thread(target=lambda: __import__('slow'), daemon=True).start()\n"
    + WAIT_BEGUN
    + "t = threading.Thread(target=lambda: __import__('slow'))\nt.start()\n"
    + READY
    + "t.join()\n",
    # ... whose top level reads a pipe a child writes after 600 s: the lock's holder may wake
    "reader": "import os, sys, threading, time\nsys.path.insert(0, {d!r})\nr, w = os.pipe()\n"
    "if os.fork() == 0:\n    time.sleep(600); os.write(w, b'x'); os._exit(0)\nos.environ['R'] = str(r)\n"
    "threading.Thread(target=lambda: __import__('reads'), daemon=True).start()\n"
    + WAIT_BEGUN
    + "t = threading.Thread(target=lambda: __import__('reads'))\nt.start()\n"
    + READY
    + "t.join()\n",
}


@pytest.mark.e2e
@pytest.mark.parametrize("case", sorted(MAIN))
def test_a_thread_joined_at_import_time_that_imports_the_same_module_waits_on_its_import_lock(
    start_job, tmp_path, case
):
    """The hang was proven at first sight, but said "no living thread can end it" (the joined thread lives, blocked
    on the import lock) with the fix of a thread that "has exited or never started". Now: the thread's wait is named
    a module's import lock, every thread is said to wait, and the fix is the import-time thread's."""
    (tmp_path / "registry.py").write_text(
        "import threading\ndef _scan():\n    import registry  # noqa: F401 (a lazy import inside the worker)\n"
        + READY
        + "_t = threading.Thread(target=_scan)\n_t.start()\n_t.join()\n"
    )
    begun = str(tmp_path / "begun")
    (tmp_path / "slow.py").write_text(f"import time\nopen({begun!r}, 'w').close()\ntime.sleep(600)\n")
    (tmp_path / "reads.py").write_text(f"import os\nopen({begun!r}, 'w').close()\nos.read(int(os.environ['R']), 1)\n")
    job = start_job([sys.executable, "-c", MAIN[case].replace("{d!r}", repr(str(tmp_path)))])
    incident = inspect_json(job.pid, window=1)
    root = root_cause(incident)
    proven = root["proof"] is not None and root["proof"]["kind"] == "hang"
    assert proven is (case == "hang"), root
    if case == "hang":
        assert root["cause"] == "code.deadlock" and "module's import lock" in root["summary"], root
        assert "no living thread" not in root["summary"] + root["proof"]["fact"], root
        assert any("at import time" in f for f in root["fix"]), root["fix"]
        assert root["where"]["file"].endswith("registry.py"), root["where"]

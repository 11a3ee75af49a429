"""Waits on a file only the job's own process holds (issue [1/5]): an eventfd read or polled, and a socket whose
reader is another thread of the waiter's, blocked on what the waiter holds. Each both ways on real processes: the
hang is proven and its words say what was measured; its twin, with a writer asleep on a timer, is not proven."""

from __future__ import annotations

import sys

import pytest
from conftest import inspect_json, kcmp_says, root_cause

READY = "import os\nwith open(os.environ['HW_READY'], 'a') as f:\n    f.write(f'ready {os.getpid()}\\n')\n"
EVENTFD = {
    # main reads an eventfd nothing will write (hang), or one a thread writes after a 600-s sleep (twin)
    "read": "import os\nfd = os.eventfd(0)\n{writer}" + READY + "os.eventfd_read(fd)\n",
    # main polls an eventfd a forked helper was to write: it exited without (hang), or sleeps first (twin)
    "poll": "import os, select, time\nfd = os.eventfd(0)\nif os.fork() == 0:\n    {writer}\n    os._exit(0)\n"
    + READY
    + "select.select([fd], [], [])\n",
}
WRITER = {
    "read": (
        "",
        "import threading, time\nthreading.Thread(target=lambda: (time.sleep(600), os.eventfd_write(fd, 1))).start()\n",
    ),
    "poll": ("pass", "time.sleep(600); os.eventfd_write(fd, 1)"),
}


@pytest.mark.e2e
@pytest.mark.parametrize("how", sorted(EVENTFD))
@pytest.mark.parametrize("hang", [True, False], ids=["hang", "twin"])
def test_an_eventfd_only_its_reader_holds_is_proven_hung_and_one_a_sleeper_writes_is_not(start_job, how, hang):
    """An eventfd has no path and no end of file: only a holder's write ends its read. Was `unknown`, at the clock."""
    job = start_job([sys.executable, "-c", EVENTFD[how].replace("{writer}", WRITER[how][0 if hang else 1])])
    incident = inspect_json(job.pid, window=1)
    root = root_cause(incident)
    proven = root["proof"] is not None and root["proof"]["kind"] == "hang"
    assert proven is hang, root
    if hang:
        assert "an eventfd (eventfd-id " in root["summary"] and "only it holds it" in root["summary"], root
        assert "holds its other end" not in root["summary"], root["summary"]  # (one fd: no other end)


SOCKET = (
    "import socket, threading, time\na, b = socket.socketpair()\nlock = threading.Lock()\n"
    "def reader():\n{body}\n"
    "threading.Thread(target=reader, daemon=True).start()\n"
    "with lock:\n" + "".join(f"    {line}\n" for line in READY.splitlines()) + "    a.sendall(b'x' * (8 << 20))\n"
)
READER = {
    True: "    while True:\n        with lock:\n            pass\n        b.recv(65536)",
    False: "    time.sleep(600)\n    while b.recv(65536):\n        pass",
}


@pytest.mark.e2e
@pytest.mark.parametrize("hang", [True, False], ids=["hang", "twin"])
def test_a_full_socket_whose_reader_thread_waits_on_the_writers_lock_says_that_thread(start_job, tmp_path, hang):
    """Main holds a lock and fills a socketpair whose reader is a thread of its own that takes that lock first. It was
    proven, with the fix "The writer is the only reader of the socket it fills": false, a thread of it reads. The
    words now say where that thread waits, and the fix is for a thread that waits on the waiter."""
    script = tmp_path / "ship.py"  # (a file: the reader's frame is the user's, as in a job's own script)
    script.write_text(SOCKET.replace("{body}", READER[hang]))
    job = start_job([sys.executable, str(script)])
    incident = inspect_json(job.pid, window=1)
    root = root_cause(incident)
    proven = root["proof"] is not None and root["proof"]["kind"] == "hang"
    assert proven is hang, root
    if hang:
        assert (
            "its other threads wait too, thread 'Thread-1 (reader)' on a lock at reader (ship.py:6)" in root["summary"]
        ), root
        assert not any("only reader" in f for f in root["fix"]), root["fix"]


ALARMED = {
    "eventfd": "import os, signal\nfd = w = os.eventfd(0)\nwrite = lambda *a: os.eventfd_write(fd, 1)\n",
    "pipe": "import os, signal\nfd, w = os.pipe()\nwrite = lambda *a: os.write(w, b'x')\n",
}


HANDLED = {
    "alarm": "signal.signal(signal.SIGALRM, write)\nsignal.alarm(600)\n",
    "sigterm": "signal.signal(signal.SIGTERM, write)\n",  # a signal that comes to end the job: no way forward
    "device": "dev = open('/dev/full', 'rb')\n",  # a device's driver may write an eventfd (stand-in for a GPU's)
}


@pytest.mark.e2e
@pytest.mark.parametrize("kind", sorted(ALARMED))
@pytest.mark.parametrize("how", sorted(HANDLED))
def test_a_file_only_its_reader_holds_that_its_alarm_handler_writes_is_never_proven(start_job, tmp_path, kind, how):
    """Look-alike: main reads its own eventfd or pipe, which the handler of its own signal.alarm writes (Python runs
    the handler on main inside the read). Both were proven hung and killed at the first look (--min-stall 5, an
    alarm of 20 s); the pipe's words said "so the read never ends". No proof; the words say the timer. A handler of
    SIGTERM only (it comes to end the job) leaves the proof; a device the process holds takes an eventfd's (its
    driver may write it), not a pipe's."""
    script = tmp_path / "alarmed.py"
    script.write_text(ALARMED[kind] + HANDLED[how] + READY + "os.read(fd, 8)\n")
    from hangwatch.capture.sampler import capture_job
    from hangwatch.diagnose import diagnose

    job = start_job([sys.executable, str(script)])
    ev = capture_job(job.pid, window_s=1.0, gpu=False, kernel=False, flight=False)
    waits = [w for p in ev.processes for w in p.waits]
    assert any(w.kind == kind for w in waits), waits  # the wait was seen, and followed
    root = diagnose(ev).root
    assert root.proves_hang is (how == "sigterm" or (how == "device" and kind == "pipe")), root
    if kind == "pipe" and how == "alarm":
        assert "unless a signal handler of its own writes to it: a timer of its own" in root.summary, root


TIMER = (
    "import ctypes, os, select, threading, time\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "def arm(fd, secs):\n    ts = (ctypes.c_long * 4)(0, 0, secs, 0)  # it_interval 0, it_value secs\n"
    "    assert libc.timerfd_settime(fd, 0, ts, None) == 0\n"
    "def timer(secs):\n    fd = libc.timerfd_create(1, 0)\n    arm(fd, secs)\n    return fd\n"
)
ANON = {  # (the hang's case, its twins): what only a holder could change, and a holder that could
    "timerfd disarmed": "fd = timer(0)\n" + READY + "os.read(fd, 8)\n",
    "timerfd late": "fd = timer(36000)\n" + READY + "os.read(fd, 8)\n",  # 10 h: past the job's bounds
    "epoll empty": "ep = select.epoll()\nr, w = os.pipe()\nep.register(r, select.EPOLLIN)\nos.close(r)\n"
    + READY
    + "ep.poll()\n",  # (closing a registered file drops it from the set: the poll waits on nothing)
    "timerfd soon": "fd = timer(600)\n" + READY + "os.read(fd, 8)\n",  # within the job's bounds
    "timerfd alarm": "import signal\nfd = timer(0)\nsignal.signal(signal.SIGALRM, lambda *a: arm(fd, 1))\n"
    "signal.alarm(600)\n" + READY + "os.read(fd, 8)\n",  # a handler of its own alarm arms it (inside the read)
    "timerfd thread": "fd = timer(0)\nthreading.Thread(target=lambda: (time.sleep(600), arm(fd, 1))).start()\n"
    + READY
    + "os.read(fd, 8)\n",
    "timerfd child": "fd = timer(0)\nif os.fork() == 0:\n    time.sleep(600); arm(fd, 1); os._exit(0)\n"
    + READY
    + "os.read(fd, 8)\n",  # the child holds the same timerfd (a fork's copy), and could arm it
    "epoll hangup": "import socket\na, b = socket.socketpair()\nif os.fork() == 0:\n    time.sleep(600); os._exit(0)\n"
    "b.close()\nep = select.epoll()\nep.register(a, 0)\n" + READY + "ep.poll()\n",  # (ERR and HUP only)
    "epoll child": "ep = select.epoll()\nif os.fork() == 0:\n    time.sleep(600); r, w = os.pipe()\n"
    "    ep.register(r, select.EPOLLIN); os.write(w, b'x'); os._exit(0)\n" + READY + "ep.poll()\n",
}


@pytest.mark.e2e
@pytest.mark.parametrize("case", sorted(ANON))
def test_a_timer_or_an_epoll_only_its_waiter_holds_is_proven_hung_and_one_a_holder_may_change_is_not(start_job, case):
    """A read of a timerfd that is disarmed or fires past the job's bounds, and a poll of an epoll that watches no file
    (the file registered was closed): only a holder of the same open file (the kernel's kcmp says which) could arm
    the timer or add a file. Were `unknown`, at the clock (first sight, mavlink-router#256 and the close-before-
    unregister gotcha). Twins: a timer within the bounds, a thread that arms it after a sleep, a forked child that
    holds the same timerfd or epoll and could arm it or add a file to it, an epoll that watches a socket only for its
    hang-up (the child holding its other end exits): not proven."""
    hang = case in ("timerfd disarmed", "timerfd late", "epoll empty")
    if (hang or case.endswith("child")) and not kcmp_says():
        pytest.skip("this kernel does not say which processes share a file (kcmp): nothing can be proven")
    job = start_job([sys.executable, "-c", TIMER + ANON[case]])
    incident = inspect_json(job.pid, window=1)
    root = root_cause(incident)
    proven = root["proof"] is not None and root["proof"]["kind"] == "hang"
    assert proven is hang, root
    kind = case.split()[0]
    if hang:
        said = {"timerfd disarmed": "a timerfd that is disarmed", "timerfd late": "whose timer fires in 10.0 h, past"}
        assert said.get(case, "an epoll instance that watches no file") in root["summary"], root
        assert "and only it holds it" in root["summary"], root
    if case.endswith("child"):  # the holder was found, by kcmp: the child, which could change it
        hops = [h for c in incident["graph"]["chains"] for h in c["hops"] if h["resource"] == kind]
        assert any("holds it too, and could" in h["words"] for h in hops), incident["graph"]


@pytest.mark.e2e
def test_a_timer_whose_holders_the_kernel_does_not_name_is_no_wait_and_proves_nothing(start_job, monkeypatch):
    """Where kcmp is not there (a 32-bit interpreter, a seccomp filter), which processes share a timerfd is not known:
    no wait on holders is drawn, and the disarmed timer's read is not proven (the clock decides)."""
    from hangwatch.capture import anonfds
    from hangwatch.capture.sampler import capture_job
    from hangwatch.diagnose import diagnose

    monkeypatch.setattr(anonfds, "_KCMP_NR", None)  # (the boundary: the kernel's answer)
    job = start_job([sys.executable, "-c", TIMER + ANON["timerfd disarmed"]])
    ev = capture_job(job.pid, window_s=1.0, gpu=False, kernel=False, flight=False)
    assert not [w for p in ev.processes for w in p.waits if w.kind == "timerfd"], ev.processes[0].waits
    root = diagnose(ev).root
    assert not root.proves_hang, root


DAEMON_HOLDS = (  # main reads a disarmed timerfd; a daemon it forked off (its own session, off the job's tree) holds it
    "fd = timer(0)\nmain = os.getpid()\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
    "        with open(os.environ['HW_READY'], 'a') as f:\n            f.write(f'daemon {os.getpid()}\\n')\n"
    "        end = time.monotonic() + 600\n"  # (it ends with main, killed by the test, or in 600 s: none left behind)
    "        while os.path.exists(f'/proc/{main}') and time.monotonic() < end:\n            time.sleep(0.2)\n"
    "    os._exit(0)\n"
    "while not os.path.exists(os.environ['HW_READY']) or 'daemon' not in open(os.environ['HW_READY']).read():\n"
    "    time.sleep(0.01)\n" + READY + "os.read(fd, 8)\n"
)


@pytest.mark.e2e
@pytest.mark.parametrize("readable", [True, False], ids=["read", "unreadable"])
def test_a_timer_a_daemon_off_the_tree_holds_is_not_proven_even_where_its_files_cannot_be_read(
    start_job, monkeypatch, readable
):
    """A daemon the job forked off (its own session: not the job's tree) holds the timerfd main reads, and could arm
    it. Found by the host's search, it is a holder: no proof. Where its files cannot be read (a non-dumpable process
    read by a user who is not root; as root here, its fd table is made to refuse), it is of the job's user and younger
    than the job: the search is not complete, no proof either (was: read as complete, proven)."""
    import os

    from hangwatch.capture.sampler import capture_job
    from hangwatch.diagnose import diagnose

    if not kcmp_says():
        pytest.skip("this kernel does not say which processes share a file (kcmp)")
    job = start_job([sys.executable, "-c", TIMER + DAEMON_HOLDS], ready_count=2)
    daemon = job.ready_pids()["daemon"]
    try:
        if not readable:
            listdir = os.listdir

            def refuse(path):  # (the boundary: the kernel's answer for another's non-dumpable process)
                if str(path) == f"/proc/{daemon}/fd":
                    raise PermissionError(13, "Permission denied", str(path))
                return listdir(path)

            monkeypatch.setattr(os, "listdir", refuse)
        ev = capture_job(job.pid, window_s=1.0, gpu=False, kernel=False, flight=False)
        monkeypatch.undo()
        waits = [w for p in ev.processes for w in p.waits if w.kind == "timerfd"]
        assert waits, ev.processes[0].waits
        if readable:
            assert [h.pid for h in waits[0].holders] == [daemon], waits
        else:
            assert "searched for" in (waits[0].note or ""), waits
        assert not diagnose(ev).root.proves_hang, diagnose(ev).root
    finally:
        os.kill(daemon, 9)

"""A look's facts are of one moment: a semaphore's sharers are read after the samples, and a sharer that ended in
between is one that moved, not one that never shared it. A consumer that marked its tasks done and exited between the
last sample and that read left its parent's stale sample waiting and no other sharer: "every process that shares it
waits on it; its count is 0", a proof, and a healthy JoinableQueue job killed (once in three CI runs). Both ways on real
processes: the sharer that released the semaphore and ended is no proof; the sharer killed before it released is, at
the next look."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

CHILD = {
    # the child releases the semaphore and exits: main wakes and goes on (to a sleep)
    "moved": "signal.sigwait([signal.SIGUSR1])\n    sem.release()",
    # the child is killed before it releases: main waits for ever
    "died": "time.sleep(600)",
}
JOB = (
    "import multiprocessing as mp, os, signal, time\n"
    "def child(sem):\n    {child}\n"
    "if __name__ == '__main__':\n"
    "    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])\n"
    "    ctx = mp.get_context('fork')\n    sem = ctx.Semaphore(0)\n"
    "    p = ctx.Process(target=child, args=(sem,))\n    p.start()\n"
    "    with open(os.environ['HW_READY'], 'a') as f:\n        f.write(f'ready {{p.pid}}\\n')\n"
    "    sem.acquire()  # HANG-HERE\n    time.sleep(600)\n"
)


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _wchan(pid: int) -> str:
    with open(f"/proc/{pid}/wchan") as f:
        return f.read()


def _until(check, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.e2e
@pytest.mark.parametrize("way", ["moved", "died"])
def test_a_sharer_that_ended_after_the_samples_is_no_proof_that_every_sharer_waits(start_job, way):
    from hangwatch.capture.sampler import STACK_TIMEOUT_S, _Rounds, find_py_spy
    from hangwatch.capture.waits import read_waits

    job = start_job([sys.executable, "-c", JOB.format(child=CHILD[way])])
    child = int(job.ready_file.read_text().split()[1])
    _until(lambda: "futex" in _wchan(job.pid), "main never waited on the semaphore")
    py_spy = find_py_spy()

    def look() -> _Rounds:
        rounds = _Rounds(job.pid, os.sysconf("SC_CLK_TCK"), py_spy, STACK_TIMEOUT_S)
        rounds.take()
        rounds.take()
        return rounds

    def sem_wait(rounds: _Rounds):
        waits = read_waits(rounds.series, rounds.infos, rounds.gone, py_spy).get(job.pid, ())
        return next((w for w in waits if w.kind == "semaphore"), None)

    before = look()
    assert job.pid in sem_wait(before).waiters  # the samples and the read agree while nothing moves
    os.kill(child, signal.SIGUSR1 if way == "moved" else signal.SIGKILL)
    _until(lambda: _state(child) == "Z", "the child never ended")
    if way == "moved":
        _until(lambda: "futex" not in _wchan(job.pid), "main never woke")
    w = sem_wait(before)  # the samples from before the child ended, the sharers read now
    assert w is not None and w.holders and child in w.sharers, w  # was: no holder, waiters [main], count 0: a proof
    said = next(h.how for h in w.holders if h.pid == child)
    assert "ended after the samples" in said and "shares the semaphore" not in said, said  # its maps were not read
    if way == "died":  # a look after its end: its samples say it ended; nobody can release the semaphore
        w = sem_wait(look())
        assert w is not None and not w.holders and w.value == 0 and w.waiters == (job.pid,), w

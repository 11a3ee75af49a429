"""What a capture counts between its stack reads: ptrace's own stops never count as the job's threads waking.

A stack read stops every thread; a blocked one goes back to its wait when the scheduler next runs it. Counted
before it has, that switch is ours, and three of them in a window made a prompt nobody answers look like a thread
that wakes again and again (one CI run, slow instead of hung). Here the scheduler's delay is replayed."""

from __future__ import annotations

from hangwatch.capture import sampler


def _taken(state: str) -> dict:
    task = sampler._Task(11, "python", state, 0, None, 5)
    return {10: (None, [task])}  # the process sample is not read here


def _count(
    monkeypatch, states: list[str], switches: list[int], state_before: str = "S", stopped: frozenset = frozenset({10})
) -> tuple[int, int]:
    """The count taken after a read, and how many times the thread's state was looked at."""
    seen = iter(states)
    looks = []

    def state(pid: int, tid: int) -> str:
        looks.append(tid)
        return next(seen, states[-1])

    monkeypatch.setattr(sampler, "_state", state)
    monkeypatch.setattr(sampler.proc, "read_ctx_switches", lambda path: switches[min(len(looks), len(switches)) - 1])
    monkeypatch.setattr(sampler, "_syscalls", lambda pid, tasks: None)
    out = sampler._switches_now(_taken(state_before), stopped, settle_s=0.05, sleep=lambda s: None)
    return out[(10, 11)], len(looks)


def test_the_count_waits_for_a_woken_sleeper_to_sleep_again(monkeypatch):
    # runnable twice (ptrace's resume not yet scheduled), then back in its wait, one switch later
    n, looks = _count(monkeypatch, ["R", "R", "S"], [7, 7, 8])
    assert (n, looks) == (8, 3)


def test_a_sleeper_still_awake_at_the_deadline_is_counted_one_switch_ahead(monkeypatch):
    n, looks = _count(monkeypatch, ["R"], [7])
    assert n == 8 and looks >= 2


def test_a_thread_that_was_running_before_the_read_is_not_waited_for(monkeypatch):
    n, looks = _count(monkeypatch, ["R"], [7], state_before="R")
    assert (n, looks) == (7, 0)


def test_a_process_the_read_did_not_stop_is_not_waited_for(monkeypatch):
    """Read --nonblocking (a thread in D or T), or not read at all (not Python, no py-spy): nothing woke it."""
    n, looks = _count(monkeypatch, ["R"], [7], stopped=frozenset())
    assert (n, looks) == (7, 0)


def test_a_store_read_that_fails_at_one_look_keeps_the_address_the_last_look_read(monkeypatch):
    # py-spy past its timeout on a loaded machine once lost the store's count from the verdict (one CI run); a read
    # whose frames name no store any more (the rank moved on) keeps nothing, and a pid reused is another process
    import os

    import psutil

    from hangwatch.capture import rendezvous
    from hangwatch.records.evidence import ProcessInfo, Role

    info = ProcessInfo(
        pid=os.getpid(), ppid=os.getppid(), pgid=os.getpgid(0), sid=os.getsid(0), name="python", cmdline=("python",),
        exe=None, is_python=True, role=Role.RANK, rank=0, local_rank=0, world_size=2,
        create_time=psutil.Process().create_time(), stdout=None, stderr=None, stdout_is_file=False,
    )  # fmt: skip
    monkeypatch.setattr(rendezvous, "_LAST_READ", {})
    store, nothing = ("127.0.0.1", 29511, 2, 0, "gloo"), (None, None, None, None, None)
    reads = iter([store, None, nothing, None])
    monkeypatch.setattr(rendezvous, "_from_frames", lambda pid, py_spy: next(reads))
    looks = [rendezvous.read_rendezvous(info, "py-spy") for _ in range(4)]
    assert [(r.host, r.port, r.world_size, r.rank) for r in looks] == [store[:4], store[:4], nothing[:4], nothing[:4]]
    other = ProcessInfo(**{**info.__dict__, "create_time": info.create_time + 1})
    monkeypatch.setattr(rendezvous, "_from_frames", lambda pid, py_spy: store)
    rendezvous.read_rendezvous(info, "py-spy")
    monkeypatch.setattr(rendezvous, "_from_frames", lambda pid, py_spy: None)
    assert rendezvous.read_rendezvous(other, "py-spy").port is None

"""Evidence decides, not the clock (issue [1/5]). Each rule both ways, on real processes:

1. proven work (a loop walking its data, a rank writing bytes) is never hung by the step history: only
   --max-slow ends it / the same loop that never ends is declared at a small --max-slow;
2. a wait is named with what it waits for and who holds it (a file lock held outside the job, a
   multiprocessing lock taken with a bare acquire(), a lock whose holder died) / a holder that works and
   releases it is waited for;
3. lost work (a Pool worker killed mid-task) is named / a pool whose workers come and go by design is not;
4. claims match the evidence ("stuck", "never returns", "holds" only where a measured fact backs them);
5. with no flags, a proven hang is declared at the first look (~15 s), not after --min-stall (120 s) / healthy
   twins under the same defaults are untouched;
6. a deterministic bug at the user's line exits 125 the first time / a wait that can pass exits 124.

Here the tests that start no process; those that do are in tests/e2e/test_evidence_decides.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")


# --- 1. proven work is not killed by the clock ------------------------------------------------------------------


def test_work_proven_earlier_in_a_stall_stands_when_a_capture_only_cannot_tell():
    """A top-level loop's few samples may all land on one of its lines (bench/zoo's 150 s silent validation
    was killed so at the 60 s floor, 2 minutes into its stall): the same loop at the same place, proven
    working earlier in this stall, is still work. In the next stall, or elsewhere, it proves nothing."""
    from types import SimpleNamespace

    from hangwatch.diagnose import Diagnosis
    from hangwatch.records.incident import Finding, Proof, ProofKind, Verdict, Where
    from hangwatch.supervise.attempt import Suspicion
    from hangwatch.supervise.stall.suspect import SuspectJudge

    def loop(line: int, fact: str | None) -> Diagnosis:
        where = Where(pid=1, rank=None, tid=1, file="/job/eval.py", line=line, function="<module>")
        return Diagnosis(
            Verdict.SLOW,
            (Finding("code.busy_loop", 0.5, "a loop", where, proof=Proof(ProofKind.WORK, fact) if fact else None),),
        )

    a = SimpleNamespace(detector=SimpleNamespace(last=SimpleNamespace(at=100.0), started_at=0.0), suspicion=Suspicion())
    same = SuspectJudge._same_work  # uses no state of the SuspectJudge
    assert same(None, a, loop(23, None)).root.proof is None  # nothing proven yet: the history bounds it
    assert same(None, a, loop(24, "99% CPU with its stack moving between lines 23, 24")).root.proves_work
    later = same(None, a, loop(23, None)).root
    assert later.proves_work and "moving between lines 23, 24" in later.proof.fact, later
    a.detector.last = SimpleNamespace(at=200.0)  # it progressed: a new stall proves itself again
    assert same(None, a, loop(23, None)).root.proof is None

    # A compile proven at work at a line, then caught in a disk write of a loaded machine at that same line (D for the
    # whole 1-s window: a storage wait, hung without proof): it was ended by --min-stall (CI, twice). The earlier
    # proof stands, and the look is slow. The same unproven wait in another function proves nothing of it.
    def at(cause: str, function: str, verdict: Verdict, fact: str | None) -> Diagnosis:
        where = Where(pid=1, rank=None, tid=1, file="/job/train.py", line=35, function=function)
        found = Finding(cause, 0.55, cause, where, proof=Proof(ProofKind.WORK, fact) if fact else None)
        return Diagnosis(verdict, (found,))

    b = SimpleNamespace(detector=SimpleNamespace(last=SimpleNamespace(at=100.0), started_at=0.0), suspicion=Suspicion())
    same(None, b, at("compile.in_progress", "<module>", Verdict.SLOW, "72% CPU with its stack moving"))
    disk = same(None, b, at("io.storage_wait", "<module>", Verdict.HUNG, None))
    assert disk.verdict == Verdict.SLOW and disk.root.proves_work and "72% CPU" in disk.root.proof.fact, disk
    elsewhere = same(None, b, at("io.storage_wait", "save", Verdict.HUNG, None))
    assert elsewhere.verdict == Verdict.HUNG and elsewhere.root.proof is None, elsewhere


# --- 2. name what a wait waits for ------------------------------------------------------------------------------


# --- 3. lost work -------------------------------------------------------------------------------------------------


# --- 4. claims match the evidence -------------------------------------------------------------------------------
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "evidence"


def _advance_unread(line: str) -> bool:
    """An evidence line that says a loop advances, with no change of its locals in it (``a -> b``)."""
    return "loop advances:" in line and "->" not in line.split("loop advances:", 1)[1]


def claim_problems(ev, findings) -> list[str]:
    """Claims in findings that no measured fact backs: "stuck" of a process that is not blocked, spinning or
    stopped; "never returns" without a proof of a hang; "holds" of a lock holder neither proven (a frame, the
    kernel) nor said to be inferred ("most likely"); "its loop advances" where the locals read show no change (no
    ``a -> b``: they stayed)."""
    from hangwatch.diagnose.scene import Scene
    from hangwatch.diagnose.state import process_state

    scene = Scene.of(ev)
    out = []
    for f in findings:
        text = f.summary
        if "never returns" in text and not f.proves_hang:
            out.append(f"{f.cause}: 'never returns' without a proof: {text}")
        out += [f"{f.cause}: 'advances' with no change read: {e}" for e in f.evidence if _advance_unread(e)]
        named = None
        if "itself stuck" in text:
            named = int(text.split("child pid ")[1].split(",")[0])
        elif " is stuck" in text or " are stuck" in text:
            named = f.where.pid if f.where else None
        v = scene.view(named) if named is not None else None
        if v is not None and process_state(v).state not in ("blocked", "spinning", "stopped"):
            out.append(f"{f.cause}: 'stuck' of pid {named}, which is {process_state(v).state}: {text}")
        if (
            " holds " in text
            and f.cause in ("code.deadlock", "io.lock_wait")
            and not (
                "most likely" in text
                or "whose frame holds it" in text
                or " holds at " in text
                or any("/proc/locks" in e or "fdinfo lists the lock" in e for e in f.evidence)
                # a pipe's or a socket's end: who holds it is read from every process's fds, by its inode
                or (" holds its " in text and any(p in e for e in f.evidence for p in ("socket:[", "pipe:[")))
            )
        ):
            out.append(f"{f.cause}: 'holds' with no holder proven or said to be inferred: {text}")
    return out


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_every_claim_of_a_finding_is_backed_by_a_measured_fact(path):
    from hangwatch.diagnose import diagnose
    from hangwatch.evidence_io import evidence_from_dict

    ev = evidence_from_dict(json.loads(path.read_text()))
    assert claim_problems(ev, diagnose(ev).findings) == []


def test_the_claims_check_fails_when_a_claim_is_inverted():
    """The check is not vacuous: the old wording of a parent waiting on an idle child ("which is itself
    stuck"), "never returns" without a proof, and a loop said to advance whose locals stayed are each caught."""
    import dataclasses

    from hangwatch.diagnose import diagnose
    from hangwatch.evidence_io import evidence_from_dict

    ev = evidence_from_dict(json.loads((FIXTURES / "dataloader_worker_stuck-dl_worker_blocked.json").read_text()))
    root = diagnose(ev).findings[0]
    idle = next(p for p in ev.processes if p.info.role.value == "dataloader_worker" and p.info.pid != root.where.pid)
    stuck_idle = dataclasses.replace(
        root, summary=f"main waits for its child pid {idle.info.pid}, which is itself stuck."
    )
    unproven = dataclasses.replace(root, summary="The worker never returns its batch.", proof=None)
    stayed = dataclasses.replace(  # the words the busy-loop namer once gave one long call per turn of a loop
        root, summary="A loop.", evidence=("its loop advances: `while i < 3`: `i` stayed 0 for 0.6 s",)
    )
    problems = claim_problems(ev, [stuck_idle, unproven, stayed])
    assert len(problems) == 3 and "which is idle" in problems[0] and "without a proof" in problems[1], problems
    assert "'advances' with no change read" in problems[2], problems


# --- 5. decide early on proof, with the defaults ----------------------------------------------------------------


# --- the same rules on recorded evidence: given a capture, when one measured fact is inverted, then ---------------
def _load(name: str):
    from hangwatch.evidence_io import evidence_from_dict

    return evidence_from_dict(json.loads((FIXTURES / f"{name}.json").read_text()))


def _with_holder(ev, **change):
    """The capture with the first lock holder's measured facts changed."""
    import dataclasses

    procs = []
    for p in ev.processes:
        waits = tuple(
            dataclasses.replace(
                w, holders=tuple(dataclasses.replace(h, **change) for h in w.holders[:1]) + w.holders[1:]
            )
            for w in p.waits
        )
        procs.append(dataclasses.replace(p, waits=waits))
    return dataclasses.replace(ev, processes=tuple(procs))


def test_the_holder_of_a_file_lock_decides_the_verdict():
    from hangwatch.diagnose import diagnose

    ev = _load("lock_wait_flock")
    asleep = diagnose(ev)  # the holder sleeps `time.sleep(3600)`: its timer ends after the default --max-slow
    assert (asleep.verdict.value, asleep.root.cause) == ("hung", "io.lock_wait") and asleep.root.proves_hang
    assert "ends in 1.0 h" in asleep.root.proof.fact and "--max-slow" in asleep.root.proof.fact
    import dataclasses

    bound = diagnose(dataclasses.replace(ev, timer_bound_s=7200.0))  # a job given 2 h: the holder wakes within it
    assert (bound.verdict.value, bound.root.cause, bound.root.proof) == ("slow", "io.lock_wait", None)
    assert bound.root.summary.endswith("is asleep: state S, 0% CPU, 0 bytes moved.")  # the chain's end, measured
    nap = _with_holder(
        ev,
        frames=tuple(dataclasses.replace(f, code="time.sleep(20)") for f in ev.processes[0].waits[0].holders[0].frames),
    )
    assert diagnose(nap).verdict.value == "slow"  # a holder on a 20-s timer releases the lock by itself: not a hang
    working = diagnose(_with_holder(ev, cpu_percent=95.0))
    assert (working.verdict.value, working.root.cause) == ("slow", "io.lock_wait")
    assert working.root.proves_work and "which works" in working.root.summary
    gone = diagnose(_with_holder(ev, state=None))
    assert gone.verdict.value == "hung" and gone.root.proves_hang and "is gone" in gone.root.summary
    stopped = diagnose(_with_holder(ev, state="T"))
    assert stopped.verdict.value == "hung" and "is stopped" in stopped.root.summary


def _soft_lock(ev, note: str):
    """The capture with its lock waits made waits for a soft lock that no holder was found for, with ``note``."""
    import dataclasses

    return dataclasses.replace(
        ev,
        processes=tuple(
            dataclasses.replace(
                p, waits=tuple(dataclasses.replace(w, kind="soft", holders=(), note=note) for w in p.waits)
            )
            for p in ev.processes
        ),
    )


def test_a_holder_waiting_for_its_children_is_as_alive_as_they_are_and_only_a_sole_child_proves():
    """`flock gpu.lock python train.py` outside the job: the lock's holder waits in wait4() for its child (read with
    it, one look). A child that works is the holder's work (slow, its proof of work), through a shell too (`flock -c`:
    flock, sh, python); a sole child stopped proves the hang. A wait for any of several children ends when any does: a
    sibling asleep for a day proves nothing while another may end first."""
    from hangwatch.diagnose import diagnose
    from hangwatch.records.evidence import LockHolder

    ev = _load("lock_wait_flock")

    def kid(pid: int, state: str, cpu: float, **more) -> LockHolder:
        return LockHolder(pid, f"python train.py {pid}", "root", state, cpu, 0, 60.0, False, how="a child", **more)

    def waiting(*kids: LockHolder):  # the holder: blocked in wait4, 0% CPU, no timer
        return _with_holder(ev, state="S", cpu_percent=0.0, sleeping=False, wakes_in=None, frames=(), waits_for=kids)

    trains = diagnose(waiting(kid(9001, "R", 97.0)))
    assert trains.verdict.value == "slow" and trains.root.proof is not None and trains.root.proof.kind == "work"
    assert "which waits for its child pid 9001" in trains.root.summary and "which works" in trains.root.summary
    shell = diagnose(waiting(kid(9001, "S", 0.0, sleeping=False, waits_for=(kid(9002, "R", 97.0),))))
    assert shell.verdict.value == "slow" and shell.root.proof is not None and shell.root.proof.kind == "work"
    stopped = diagnose(waiting(kid(9001, "T", 0.0)))
    assert stopped.verdict.value == "hung" and stopped.root.proves_hang and "is stopped" in stopped.root.summary
    day = kid(9001, "S", 0.0, sleeping=True, wakes_in=86400.0)
    blocked = kid(9002, "S", 0.0, sleeping=False)
    either = diagnose(waiting(day, blocked))
    assert not either.root.proves_hang, either.root.proof
    assert diagnose(waiting(day)).root.proves_hang  # its sole child: the wait ends only with that day


def test_a_soft_lock_file_nobody_has_open_is_proven_by_the_graph_and_one_released_is_not():
    """A soft lock (a lock file, huggingface_hub's SoftFileLock) that exists with no process holding it open was left
    by a holder that is gone: the wait's edge goes to nobody, with that fact, and the chain proves the hang. Its
    twin: the file was deleted during the look (released): no edge, no proof."""

    from hangwatch.diagnose import diagnose

    ev = _load("lock_wait_flock")

    def soft(note: str):
        return _soft_lock(ev, note)

    stale = diagnose(
        soft("the soft lock file /tmp/x.lock exists (90 s old) and no process has it open: its holder is gone")
    )
    assert (stale.verdict.value, stale.root.cause) == ("hung", "io.lock_wait") and stale.root.proves_hang
    assert "no process has it open" in stale.root.proof.fact and "Delete the stale lock file" in stale.root.fix[0]
    assert any(e.holder.startswith("nobody:") for e in stale.graph.edges)
    released = diagnose(soft("/tmp/x.lock does not exist now (released: the next try gets it)"))
    assert not released.root.proves_hang and not any(e.holder.startswith("nobody:") for e in released.graph.edges)


def test_a_soft_lock_file_on_a_filesystem_other_hosts_share_is_named_not_proven(tmp_path, monkeypatch):
    """On NFS (Lustre, a bucket's FUSE mount) that no process of this host has the lock file open says nothing of the
    hosts that share it: a multi-node job's shared cache, where node 0 downloads while node 1 waits for its lock.
    The wait is named, not proven (the clock decides). Its twin, the same stale file on a local filesystem, is proven.
    The filesystem's type is the boundary mocked: there is no NFS here."""
    import os
    import time

    from hangwatch.capture import waits as capture_waits
    from hangwatch.diagnose import diagnose

    lock = tmp_path / "model.safetensors.lock"
    lock.write_text("")
    me = os.getpid()
    local = capture_waits._soft_lock_wait(me, me, str(lock), None, {}, None, time.time())
    monkeypatch.setattr(capture_waits, "filesystem_of", lambda pid, path: "nfs4")
    shared = capture_waits._soft_lock_wait(me, me, str(lock), None, {}, None, time.time())
    assert local.note is not None and "no process has it open" in local.note, local.note
    assert shared.note is not None and "(nfs4)" in shared.note and "another host may hold it" in shared.note
    monkeypatch.setattr(capture_waits, "filesystem_of", lambda pid, path: "fuse.fuse-overlayfs")  # a container's own
    assert "no process has it open" in (
        capture_waits._soft_lock_wait(me, me, str(lock), None, {}, None, 0.0).note or ""
    )

    ev = _load("lock_wait_flock")

    def soft(note: str):
        return _soft_lock(ev, note)

    assert diagnose(soft(local.note)).root.proves_hang
    named = diagnose(soft(shared.note))
    assert not named.root.proves_hang and not any(e.holder.startswith("nobody:") for e in named.graph.edges)
    assert named.root.cause == "io.lock_wait" and "a process on another host may hold it" in named.root.summary


def test_a_multiprocessing_lock_whose_holder_is_gone_is_proven_hung():
    import dataclasses

    from hangwatch.diagnose import diagnose

    ev = _load("deadlock_mp_lock_bare")
    inferred = diagnose(ev)
    assert inferred.root.cause == "code.deadlock" and "most likely main" in inferred.root.summary
    no_holder = dataclasses.replace(
        ev,
        processes=tuple(
            dataclasses.replace(p, waits=tuple(dataclasses.replace(w, holders=()) for w in p.waits))
            for p in ev.processes
        ),
    )
    gone = diagnose(no_holder)
    assert gone.root.cause == "code.deadlock" and "whose holder is gone" in gone.root.summary and gone.root.proves_hang
    # the proof is the graph's: the wait's edge goes to nobody, with the measured fact (count 0, every sharer waits)
    assert "count 0" in gone.root.proof.fact and "no living thread holds it" in gone.root.proof.fact
    assert any(e.resource == "semaphore" and e.holder.startswith("nobody:") for e in gone.graph.edges)
    free = dataclasses.replace(  # the twin: the same wait, its count not 0 (the next acquire gets it)
        no_holder,
        processes=tuple(
            dataclasses.replace(p, waits=tuple(dataclasses.replace(w, value=1) for w in p.waits))
            for p in no_holder.processes
        ),
    )
    loose = diagnose(free)
    assert not loose.root.proves_hang and not any(e.holder.startswith("nobody:") for e in loose.graph.edges)


def _with_thread(ev, name: str, frames: tuple, wakes: int):
    """The capture with one more thread in each process that waits on a lock, at ``frames`` in every sample, woken
    ``wakes`` times a sample."""
    import dataclasses

    from hangwatch.records.evidence import ThreadSample

    def more(p):
        extra = [
            ThreadSample(
                tid=p.info.pid + 1000,
                name=name,
                state="S",
                wchan=None,
                cpu_ticks=0,
                active=False,
                owns_gil=False,
                frames=frames,
                syscall="futex",
                ctx_switches=i * wakes,
                timeout=bool(wakes),
            )
            for i in range(len(p.samples))
        ]
        samples = tuple(
            dataclasses.replace(s, threads=(*s.threads, t), num_threads=s.num_threads + 1)
            for s, t in zip(p.samples, extra, strict=True)
        )
        return dataclasses.replace(p, samples=samples)

    return dataclasses.replace(ev, processes=tuple(more(p) if p.waits else p for p in ev.processes))


def test_who_else_could_release_a_semaphore_nobody_holds_decides_its_proof():
    """The edge to nobody of a semaphore taken that every sharing process waits for is drawn only where no other
    thread of the waiter's own process could hold it (the sharers are counted by process): a thread of the user's
    that wakes leaves it unproven. tqdm's monitor thread, which wakes every 10 s to refresh bars, is the library's
    own and does not; caught writing a bar through the user's own file object, it runs the user's code and does."""
    import dataclasses

    from hangwatch.diagnose import diagnose
    from hangwatch.records.evidence import Frame

    ev = _load("deadlock_mp_lock_bare")
    ev = dataclasses.replace(
        ev,
        processes=tuple(
            dataclasses.replace(p, waits=tuple(dataclasses.replace(w, holders=()) for w in p.waits))
            for p in ev.processes
        ),
    )
    run = Frame("run", "/usr/lib/python3.11/threading.py", 975, "self._target()")
    monitor = Frame(
        "run", "/venv/lib/python3.11/site-packages/tqdm/_monitor.py", 60, "self.was_killed.wait(self.sleep_interval)"
    )
    user_file = Frame("write", "/app/tee.py", 9, "with self.lock:")

    def proven(e) -> bool:
        d = diagnose(e)
        return d.root.proves_hang and any(x.holder.startswith("nobody:") for x in d.graph.edges)

    assert proven(ev)
    assert not proven(_with_thread(ev, "uploader", (Frame("upload", "/app/up.py", 4, "sock.recv(1)"), run), 3))
    assert proven(_with_thread(ev, "Thread-1", (monitor, run), 3))  # tqdm's own loop
    assert not proven(_with_thread(ev, "Thread-1", (user_file, monitor, run), 3))  # the user's code in it


def test_lost_work_names_the_process_that_went_and_needs_every_worker_idle():
    import dataclasses

    from hangwatch.diagnose import diagnose
    from hangwatch.records.evidence import VanishedProcess

    ev = _load("lost_work_inferred")
    main = next(p for p in ev.processes if p.info.role.value == "main")
    gone = VanishedProcess(
        pid=99999,
        ppid=main.info.pid,
        name="python",
        cmdline="python pool_lost.py",
        started_at=ev.started_at - 5,
        gone_at=ev.started_at - 3,
        replaced_by=None,
        reason="killed by the OOM killer (kernel log)",
    )
    named = diagnose(dataclasses.replace(ev, vanished=(gone,)))
    assert named.root.cause == "child.lost_work" and "Pool worker pid 99999 vanished at" in named.root.summary
    assert any("killed by the OOM killer" in e for e in named.root.evidence)
    # A worker measured working: nothing is lost (it may still deliver). Its megabytes come in many read calls,
    # as real reads do (one call moving bytes is no proof of work: a stack read interrupting a blocked write
    # completes it once).
    busy = dataclasses.replace(
        ev,
        vanished=(gone,),
        processes=tuple(
            dataclasses.replace(
                p,
                samples=tuple(
                    dataclasses.replace(
                        s,
                        cpu_seconds=s.cpu_seconds + 10 * i,
                        rchar=(s.rchar or 0) + 10**6 * i,
                        syscalls=(s.syscalls or 0) + 50 * i,
                    )
                    for i, s in enumerate(p.samples)
                ),
            )
            if p.info.role.value == "child"
            else p
            for p in ev.processes
        ),
    )
    assert diagnose(busy).root.cause != "child.lost_work"
    # Several went (a worker recycled by maxtasksperchild ends holding nothing): the one the kernel log names held
    # the task; with no such name, which one did is not measured, and is not said.
    recycled = dataclasses.replace(gone, pid=99990, reason=None, gone_at=ev.started_at - 1)
    killed = diagnose(dataclasses.replace(ev, vanished=(gone, recycled))).root
    assert "Pool worker pid 99999 vanished at" in killed.summary and "most likely holding" in killed.summary, (
        killed.summary
    )
    unnamed = diagnose(dataclasses.replace(ev, vanished=(dataclasses.replace(gone, reason=None), recycled))).root
    assert unnamed.cause == "child.lost_work" and "while holding" not in unnamed.summary, unnamed.summary
    assert "2 pool workers vanished (pids 99999, 99990" in unnamed.summary, unnamed.summary


def test_the_default_timer_bound_is_the_default_max_slow():
    """A timer is judged against the job's --max-slow; where a capture does not say (inspect, old evidence), against
    the default one, which is this very number."""
    from hangwatch import signatures as sg
    from hangwatch.supervise.options import DEFAULTS

    assert DEFAULTS["max_slow"] == sg.DEFAULT_TIMER_BOUND_S


def _as_zombie(ev, pid: int, status: int):
    """The capture with process ``pid`` a zombie throughout (exited, its status not read), with that exit status."""
    import dataclasses

    def zombie(p):
        samples = tuple(dataclasses.replace(s, state="Z", threads=(), exit_status=status) for s in p.samples)
        return dataclasses.replace(p, samples=samples)

    return dataclasses.replace(ev, processes=tuple(zombie(p) if p.info.pid == pid else p for p in ev.processes))


def test_a_dataloader_worker_that_exited_is_read_by_its_exit_status():
    """A worker killed (SIGKILL), still a zombie: torch's own check of its workers raises within 5 s, so the main's
    wait ends: slow, never hung (a look at --min-stall 1 came before the crash under load). A worker whose
    IterableDataset share ended exits 0 and stays a zombie until the epoch ends: it holds no batch, and the stuck
    worker beside it is still the one the main waits for."""
    from hangwatch.diagnose import diagnose
    from hangwatch.records.incident import Verdict

    ev = _load("dataloader_worker_stuck-dl_worker_blocked")
    d = diagnose(ev)
    stuck = d.root.where.pid
    idle = next(p.info.pid for p in ev.processes if p.info.role.value == "dataloader_worker" and p.info.pid != stuck)
    assert (d.verdict, d.root.cause) == (Verdict.HUNG, "dataloader.worker_stuck")

    killed = diagnose(_as_zombie(ev, stuck, 9))
    assert killed.verdict == Verdict.SLOW, (killed.verdict, killed.root.summary)
    ended = next(c for c in killed.graph.chains if c.end.id == f"pid:{stuck}")
    assert ended.ending == "ended" and "killed by SIGKILL" in ended.end.fact

    finished = diagnose(_as_zombie(ev, idle, 0))
    assert (finished.verdict, finished.root.cause, finished.root.where.pid) == (
        Verdict.HUNG,
        "dataloader.worker_stuck",
        stuck,
    )


def test_a_stop_proves_a_hang_only_when_every_sample_saw_it_and_no_tracer_that_is_alive_holds_it():
    """strace stops its tracee at each call: a working process may read stopped (t) in one sample, or in all of them
    while its CPU time grows: neither is a stop. Stopped in every sample at no CPU, in a tracing stop (t), its tracer
    decides: gdb at its prompt on a terminal (a person debugging), or driven through pipes (an IDE), hold it: slow,
    and never stuck at a startup probe. A tracer stopped itself, or one that waits in wait4() for its tracee to
    change state (a signal stopped it: strace keeps such a stop), proves the hang, as a stop with no tracer does."""
    import dataclasses

    from hangwatch.diagnose import diagnose
    from hangwatch.records.evidence import LockHolder
    from hangwatch.supervise.stall.startup import startup_decision

    ev = _load("stopped_process_is_reported_and_left_stopped")

    def seen(states: str, tracer: LockHolder | None = None, cpu_step: float = 0.0):
        p = ev.processes[0]
        samples = tuple(
            dataclasses.replace(
                s,
                state=st,
                tracer=tracer.pid if tracer and st == "t" else None,
                cpu_seconds=s.cpu_seconds + i * cpu_step,
            )
            for i, (s, st) in enumerate(zip(p.samples, states, strict=True))
        )
        return diagnose(dataclasses.replace(ev, processes=(dataclasses.replace(p, samples=samples, tracer=tracer),)))

    def tracer(state: str, cpu: float, call: str | None, stdin: str | None = None) -> LockHolder:
        return LockHolder(
            7001, "gdb -p 6530", "root", state, cpu, 0, 9.0, False, how="traces it", stdin=stdin, call=call
        )

    sigstop = seen("TTTTT")
    assert (sigstop.verdict.value, sigstop.root.cause) == ("stopped", "process.stopped") and sigstop.root.proves_hang
    assert "in all 5 samples" in sigstop.root.proof.fact
    for passing in (seen("SSSSt"), seen("ttttt", cpu_step=0.3)):  # a pause at one call, or one at each while it works
        assert passing.root.cause != "process.stopped" and not passing.root.proves_hang, passing.root
    person = seen("ttttt", tracer("S", 0.0, "poll", stdin="/dev/pts/4"))
    assert (person.verdict.value, person.root.cause, person.root.proof) == ("slow", "process.stopped", None)
    assert "held by its tracer pid 7001" in person.root.summary
    assert "is blocked in poll(), its standard input a terminal (/dev/pts/4)" in person.root.evidence[0]
    assert not startup_decision(person, None).hung
    ide = seen("ttttt", tracer("S", 0.0, "read", stdin="pipe:[4242]"))  # gdb/MI driven by an IDE through pipes
    assert (ide.verdict.value, ide.root.proof) == ("slow", None) and not startup_decision(ide, None).hung
    for proven, said in (
        (seen("ttttt", tracer("T", 0.0, None)), "is stopped too"),
        (seen("ttttt", tracer("S", 0.0, "wait4")), "waits in wait4() for its state to change"),
    ):
        assert proven.verdict.value == "stopped" and proven.root.proves_hang and said in proven.root.proof.fact
        assert startup_decision(proven, None).hung

"""The run loop and the restart policy on scripted jobs: no real process, a clock that advances
only when the loop waits. Given / when / then."""

from __future__ import annotations

import json
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path

from hangwatch.errors import CaptureError
from hangwatch.records.evidence import Evidence
from hangwatch.records.run import OnHang
from hangwatch.recover.restart import GiveUp, RestartPolicy
from hangwatch.recover.terminate import Termination
from hangwatch.supervise.attempt import SupervisionFailed
from hangwatch.supervise.config import RunConfig
from hangwatch.supervise.job.launch import OnChunk
from hangwatch.supervise.supervisor import Supervisor


# --- the restart policy ------------------------------------------------------------------------------
def test_restart_until_max_restarts():
    p = RestartPolicy(max_restarts=2)
    steps = [p.decide(n, asked=True, progressed=True, max_step=10 * n) for n in (1, 2, 3)]
    assert [d.restart for d in steps] == [True, True, False]
    assert steps[2].give_up == GiveUp.MAX_RESTARTS


def test_two_attempts_in_a_row_without_new_progress_stop_restarts():
    p = RestartPolicy(max_restarts=10)
    assert p.decide(1, asked=True, progressed=True, max_step=50).restart
    second = p.decide(2, asked=True, progressed=True, max_step=50)  # same step again: no new progress
    assert second.restart and second.futile == 1
    third = p.decide(3, asked=True, progressed=False, max_step=None)
    assert not third.restart and third.give_up == GiveUp.NO_NEW_PROGRESS
    assert "2 attempts" in (third.message(10) or "")


def test_new_progress_resets_the_futile_count():
    p = RestartPolicy(max_restarts=10)
    p.decide(1, asked=True, progressed=False, max_step=None)
    assert p.decide(2, asked=True, progressed=True, max_step=5).futile == 0


def test_not_asked_is_never_restarted_and_says_nothing():
    d = RestartPolicy(max_restarts=3).decide(1, asked=False, progressed=True, max_step=3)
    assert (d.restart, d.give_up, d.message(3)) == (False, GiveUp.NOT_ASKED, None)


def test_one_decision_per_attempt():
    p = RestartPolicy(max_restarts=1)
    first = p.decide(1, asked=True, progressed=False, max_step=None)
    assert p.decide(1, asked=False, progressed=True, max_step=9) is first


# --- the loop on a scripted job ------------------------------------------------------------------------
class FakeClock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def now(self) -> float:
        return self.t

    def from_wall(self, t: float) -> float:
        return t

    def wait(self, wake: threading.Event, timeout_s: float) -> None:
        self.t += timeout_s


@dataclass
class ScriptedJob:
    """Prints ``step N`` every second up to ``steps``, then stands still until ended."""

    clock: FakeClock
    on_chunk: OnChunk
    steps: int
    pid: int = 4242
    started: float = 0.0
    printed: int = 0
    code: int | None = None
    signals: list[int] = field(default_factory=list)
    owned: bool = True

    def poll(self) -> int | None:
        while self.code is None and self.printed < self.steps and self.clock.t - self.started >= self.printed + 1:
            self.printed += 1
            self.on_chunk(f"step {self.printed}\n".encode(), self.clock.t)
        return self.code

    def scan(self) -> None:
        pass

    def leftovers(self) -> list[int]:
        return []

    def known_pids(self) -> list[int]:
        return [self.pid]

    def vanished(self) -> list:
        return []

    def end(self, grace_s: float, first_signal: int = signal.SIGTERM) -> Termination:
        self.signals.append(first_signal)
        self.code = -first_signal
        return Termination([self.pid], [], [], 0.0)

    def forward(self, signum: int) -> None:
        self.signals.append(signum)

    def drain(self, quiet_s: float) -> None:
        pass

    def output_held(self) -> int | None:
        return None

    def close(self) -> None:
        pass


def _evidence(pid: int, window: float) -> Evidence:
    return Evidence(
        target_pid=pid, root_pid=pid, started_at=0.0, ended_at=window, clock_ticks=100, cpu_count=2, processes=()
    )


def _supervisor(tmp_path: Path, jobs: list[ScriptedJob], steps: list[int], **cfg: object) -> Supervisor:
    clock = FakeClock()

    def launcher(argv: list[str], env: dict[str, str], on_chunk: OnChunk) -> ScriptedJob:
        job = ScriptedJob(clock, on_chunk, steps[len(jobs)], started=clock.t)
        jobs.append(job)
        return job

    cfg = {"min_stall": 5.0, "startup_grace": 20.0, "kill_grace": 1.0, **cfg}
    config = RunConfig(argv=["train"], run_dir=tmp_path / "run", **cfg)  # type: ignore[arg-type]
    return Supervisor(config, env={}, clock=clock, launcher=launcher, capture=_evidence)


def _events(tmp_path: Path) -> list[dict]:
    return [json.loads(ln) for ln in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]


def _incident(tmp_path: Path, n: int) -> dict:
    return json.loads((tmp_path / "run" / "incidents" / f"{n:03d}" / "incident.json").read_text())


def test_a_stall_is_declared_after_min_stall_and_the_job_killed(tmp_path):
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [3], on_hang=OnHang.KILL)
    assert sup.run() == 124
    kinds = [e["event"] for e in _events(tmp_path)]
    assert kinds.index("suspect") < kinds.index("incident") < kinds.index("action")
    suspect = next(e for e in _events(tmp_path) if e["event"] == "suspect")
    assert 5.0 <= suspect["stalled_seconds"] <= 5.5  # min-stall after the last step, on the scripted clock
    assert _incident(tmp_path, 1)["action"] == "killed"
    assert jobs[0].signals == [signal.SIGTERM]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["attempts"], summary["exit_code"], summary["last_step"]) == (1, 124, 3)
    assert (summary["exit_reason"], summary["requeue"]) == ("hung_requeue", True)


def test_restart_label_on_disk_matches_what_happened(tmp_path):
    # Attempt 1 reaches step 3, attempts 2 and 3 never pass it: attempt 3 is the second futile one.
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [3, 3, 2], on_hang=OnHang.RESTART, max_restarts=5)
    assert sup.run() == 125  # the same hang twice in a row: not worth a requeue
    assert len(jobs) == 3
    assert [_incident(tmp_path, n)["action"] for n in (1, 2, 3)] == ["restarted", "restarted", "killed"]
    give_up = next(e for e in _events(tmp_path) if e["event"] == "give_up")
    assert give_up["reason"] == "no_new_progress"


def test_report_mode_leaves_the_job_running(tmp_path):
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [2], on_hang=OnHang.REPORT)
    done = {"n": 0}
    real_wait = sup.clock.wait

    def wait(wake: threading.Event, timeout_s: float) -> None:  # end the job by itself a while after the incident
        real_wait(wake, timeout_s)
        if (tmp_path / "run" / "incidents" / "001").exists():
            done["n"] += 1
            if done["n"] > 20:
                jobs[0].code = 0

    sup.clock.wait = wait  # type: ignore[method-assign]
    assert sup.run() == 0
    assert _incident(tmp_path, 1)["action"] == "reported"
    assert jobs[0].signals == []


def test_an_internal_error_is_recorded_and_supervision_goes_on(tmp_path):
    jobs: list[ScriptedJob] = []
    calls = {"n": 0}

    def flaky(pid: int, window: float) -> Evidence:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("capture bug")
        return _evidence(pid, window)

    sup = _supervisor(tmp_path, jobs, [2], on_hang=OnHang.KILL)
    sup.capture = flaky
    assert sup.run() == 124
    errors = [e for e in _events(tmp_path) if e["event"] == "internal_error"]
    assert len(errors) == 1 and "capture bug" in errors[0]["error"]
    assert _incident(tmp_path, 1)["action"] == "killed"


def test_a_loop_that_keeps_failing_ends_the_job_cleanly(tmp_path):
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [1], on_hang=OnHang.KILL)

    def broken() -> None:
        raise RuntimeError("always")

    sup.intake.poll = broken  # type: ignore[method-assign,assignment]  # a bug in progress intake, every round
    try:
        sup.run()
    except SupervisionFailed as e:
        assert "supervision failed" in str(e)
        assert e.exit_code == 123  # the exit-code contract: the CLI exits with it
    else:
        raise AssertionError("expected SupervisionFailed")
    assert jobs[0].signals == [signal.SIGTERM]  # ended in finally, never left running
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["exit_code"], summary["exit_reason"], summary["requeue"]) == (123, "supervision_failed", False)


def test_a_job_gone_during_capture_is_not_an_incident(tmp_path):
    jobs: list[ScriptedJob] = []

    def gone(pid: int, window: float) -> Evidence:
        jobs[0].code = 0
        raise CaptureError("no such process", "nothing to do")

    sup = _supervisor(tmp_path, jobs, [1], on_hang=OnHang.KILL)
    sup.capture = gone
    assert sup.run() == 0
    assert not (tmp_path / "run" / "incidents").exists()


def _capture_printing(jobs: list[ScriptedJob], text: bytes):
    def capture(pid: int, window: float) -> Evidence:
        job = jobs[0]
        job.on_chunk(text, job.clock.t)
        return _evidence(pid, window)

    return capture


def test_new_output_during_the_capture_means_not_hung(tmp_path):
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [3], on_hang=OnHang.KILL, max_slow=20.0)
    sup.capture = _capture_printing(jobs, b"writing checkpoint shards...\n")  # it moved while captured
    seen = {"n": 0}
    real_wait = sup.clock.wait

    def wait(wake: threading.Event, timeout_s: float) -> None:
        real_wait(wake, timeout_s)
        if any(e["event"] == "extended" for e in _events(tmp_path)):
            seen["n"] += 1
            if seen["n"] == 1:
                jobs[0].code = 0  # and then it finished

    sup.clock.wait = wait  # type: ignore[method-assign]
    assert sup.run() == 0
    extended = next(e for e in _events(tmp_path) if e["event"] == "extended")
    assert extended["reason"] == "new output during the capture"
    assert not (tmp_path / "run" / "incidents").exists()


def test_a_redraw_with_only_a_new_clock_during_the_capture_is_not_movement(tmp_path):
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [3], on_hang=OnHang.KILL)
    sup.capture = _capture_printing(jobs, b"\rstep 3 0:00:09 4.1it/s")  # same step, new elapsed time and rate
    assert sup.run() == 124
    assert _incident(tmp_path, 1)["action"] == "killed"


def test_would_stop_predicts_the_futile_give_up_without_recording_it():
    p = RestartPolicy(max_restarts=10)
    p.decide(1, asked=True, progressed=True, max_step=50)
    assert not p.would_stop(2, progressed=True, max_step=60) and not p.would_stop(2, progressed=True, max_step=50)
    p.decide(2, asked=True, progressed=True, max_step=50)  # no new progress: 1 of 2
    assert p.would_stop(3, progressed=False, max_step=None)
    assert p.decide(3, asked=True, progressed=False, max_step=None).give_up == GiveUp.NO_NEW_PROGRESS
    assert p.would_stop(3, progressed=True, max_step=99)  # decided: the recorded answer


# --- evidence decides (issue [1/5]): scripted diagnoses, both ways -------------------------------------------------
def _diagnosing(monkeypatch, verdict: str, cause: str, proof: str | None) -> None:
    """Every capture is diagnosed as ``cause`` with ``verdict``; ``proof``: "work", "hang" or None."""
    from hangwatch.diagnose import Diagnosis
    from hangwatch.records.incident import Finding, Proof, ProofKind, Verdict, Where

    where = Where(pid=4242, rank=None, tid=4242, file="/job/train.py", line=30, function="compute_metrics")
    finding = Finding(
        cause, 0.8, f"main is in {cause}", where, proof=Proof(ProofKind(proof), "a measured fact") if proof else None
    )
    monkeypatch.setattr("hangwatch.supervise.stall.look.diagnose", lambda ev: Diagnosis(Verdict(verdict), (finding,)))


def _stalled_at_incidents(tmp_path: Path) -> list[tuple[str, float]]:
    """(verdict, seconds from the last progress) of each incident, on the scripted clock."""
    out = []
    for path in sorted((tmp_path / "run" / "incidents").glob("*/incident.json")):
        i = json.loads(path.read_text())
        out.append((i["verdict"], i["detected_at"] - i["last_progress"]["at"]))
    return out


def test_proven_work_is_slow_until_max_slow_and_said_again_every_10_minutes(tmp_path, monkeypatch):
    _diagnosing(monkeypatch, "progressing", "code.computing", "work")
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [20], on_hang=OnHang.KILL, max_slow=1800.0)
    assert sup.run() == 124
    incidents = _stalled_at_incidents(tmp_path)
    assert [v for v, _ in incidents] == ["slow", "hung"], incidents
    assert 15 <= incidents[0][1] <= 25 and 1800 <= incidents[1][1] <= 1830, (
        "only --max-slow ends proven work, never the step history"
    )
    events = _events(tmp_path)
    notes = [e["stalled_seconds"] for e in events if e["event"] == "still_slow"]
    gaps = [b - a for a, b in zip([incidents[0][1], *notes[:-1]], notes, strict=True)]
    assert len(notes) == 2 and all(600 <= g <= 610 for g in gaps), (notes, gaps)
    assert all(e["bound"].startswith("--max-slow") for e in events if e["event"] == "extended")


def test_a_compile_a_look_finds_is_the_compile_phase_silent_until_max_slow(tmp_path, monkeypatch):
    """A compile seen by its stack, not declared by the startup hook (it had not reached torch's compile callback, or
    --no-autobeat): the job is in the compile phase as the hook would say it, so no `slow` incident comes at
    3 x --min-stall (the hook's phase writes none); --max-slow ends it as it ends the declared phase. Before, which
    reader saw the compile first decided whether the run had an incident (CI: compile_midway.py, 1 of 3 runs)."""
    _diagnosing(monkeypatch, "slow", "compile.in_progress", None)
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [20], on_hang=OnHang.KILL, max_slow=1800.0)
    assert sup.run() == 124
    incidents = _stalled_at_incidents(tmp_path)
    assert [v for v, _ in incidents] == ["hung"] and 1800 <= incidents[0][1] <= 1830, incidents
    assert not any(e["event"] == "still_slow" for e in _events(tmp_path))
    assert any(e["event"] == "extended" and e["cause"] == "compile.in_progress" for e in _events(tmp_path))


def test_a_look_that_proves_nothing_at_a_compiles_place_is_the_compile_phase_still(tmp_path, monkeypatch):
    """A compile proven at work at its line; every later look catches it in a disk write at that line (D for the whole
    window, io.storage_wait, hung without proof), as a loaded machine's did in CI twice: once a `slow` incident, once
    killed at --min-stall. The earlier proof stands at its place: no `slow` incident, and only --max-slow ends it."""
    from hangwatch.diagnose import Diagnosis
    from hangwatch.records.incident import Finding, Proof, ProofKind, Verdict, Where

    where = Where(pid=4242, rank=None, tid=4242, file="/job/train.py", line=35, function="<module>")
    compiling = Finding("compile.in_progress", 0.8, "compiling", where, proof=Proof(ProofKind.WORK, "72% CPU"))
    disk = Finding("io.storage_wait", 0.55, "in D, waiting on the disk", where)
    looks = iter([Diagnosis(Verdict.SLOW, (compiling,))])
    monkeypatch.setattr(
        "hangwatch.supervise.stall.look.diagnose", lambda ev: next(looks, Diagnosis(Verdict.HUNG, (disk,)))
    )
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [20], on_hang=OnHang.KILL, max_slow=1800.0)
    assert sup.run() == 124
    incidents = _stalled_at_incidents(tmp_path)
    assert [v for v, _ in incidents] == ["hung"] and 1800 <= incidents[0][1] <= 1830, incidents


def test_without_proof_of_work_the_step_history_decides(tmp_path, monkeypatch):
    """The twin: the same alive job, with nothing that proves it works, is hung by its history (100 x 1 s)."""
    _diagnosing(monkeypatch, "slow", "unknown", None)
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [20], on_hang=OnHang.KILL, max_slow=1800.0, history_floor=60.0)
    assert sup.run() == 124
    incidents = _stalled_at_incidents(tmp_path)
    assert incidents[-1][0] == "hung" and 100 <= incidents[-1][1] <= 110, incidents


def test_the_first_look_declares_a_proven_hang_at_15_s(tmp_path, monkeypatch):
    _diagnosing(monkeypatch, "hung", "dataloader.worker_stuck", "hang")
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [20], on_hang=OnHang.KILL, min_stall=120.0)
    sup.run()
    events = _events(tmp_path)
    look = next(e for e in events if e["event"] == "look")
    assert look["hung"] and 15 <= look["stalled_seconds"] <= 16
    assert [(v, round(s)) for v, s in _stalled_at_incidents(tmp_path)] in ([("hung", 15)], [("hung", 16)])
    assert not any(e["event"] == "suspect" for e in events), "decided before --min-stall"


def test_the_first_look_waits_for_min_stall_without_proof(tmp_path, monkeypatch):
    _diagnosing(monkeypatch, "hung", "dataloader.worker_stuck", None)
    jobs: list[ScriptedJob] = []
    sup = _supervisor(tmp_path, jobs, [20], on_hang=OnHang.KILL, min_stall=120.0)
    sup.run()
    looks = [e for e in _events(tmp_path) if e["event"] == "look"]
    assert len(looks) == 1 and not looks[0]["hung"]
    incidents = _stalled_at_incidents(tmp_path)
    assert len(incidents) == 1 and 120 <= incidents[0][1] <= 122, incidents


# --- a clock that steps, and a loop that was paused ------------------------------------------------------
class SteppingClock(FakeClock):
    """The loop's clock (monotonic) and a wall clock that NTP steps: ``wall = t + offset``."""

    def __init__(self) -> None:
        super().__init__()
        self.offset = 0.0

    def from_wall(self, t: float) -> float:
        return t - self.offset


def _stepping(tmp_path: Path, steps: int, **cfg: object) -> tuple[Supervisor, SteppingClock, list[ScriptedJob]]:
    clock, jobs = SteppingClock(), []

    def launcher(argv: list[str], env: dict[str, str], on_chunk: OnChunk) -> ScriptedJob:
        job = ScriptedJob(clock, lambda data, at: on_chunk(data, at + clock.offset), steps, started=clock.t)
        jobs.append(job)  # the pump stamps its chunks with the wall clock
        return job

    config = RunConfig(
        argv=["train"], run_dir=tmp_path / "run", **{"min_stall": 5.0, "startup_grace": 20.0, "kill_grace": 1.0, **cfg}
    )  # type: ignore[arg-type]
    return Supervisor(config, env={}, clock=clock, launcher=launcher, capture=_evidence), clock, jobs


def test_a_wall_clock_step_is_neither_a_stall_nor_a_negative_interval(tmp_path):
    """NTP steps the wall clock 10 minutes forward, then 15 back, while the job prints a step a second."""
    sup, clock, jobs = _stepping(tmp_path, steps=30, on_hang=OnHang.KILL)
    real_wait = clock.wait

    def wait(wake: threading.Event, timeout_s: float) -> None:
        real_wait(wake, timeout_s)
        if jobs and jobs[0].printed == 8 and clock.offset == 0.0:
            clock.offset = 600.0
        elif jobs and jobs[0].printed == 16 and clock.offset == 600.0:
            clock.offset = -300.0
        elif jobs and jobs[0].printed >= 30:
            jobs[0].code = 0

    clock.wait = wait  # type: ignore[method-assign]
    assert sup.run() == 0
    kinds = [e["event"] for e in _events(tmp_path)]
    assert "suspect" not in kinds and "incident" not in kinds, kinds
    det = sup.ctx.attempts[0].detector
    assert det.intervals and all(0.5 <= i <= 1.5 for i in det.intervals), list(det.intervals)


def test_a_paused_loop_restarts_its_stall_clocks_and_says_so(tmp_path):
    """The machine is paused for 60 s while the job sits in a long, silent batch: after the pause the job
    resumes its batch and goes on; 60 s of paused time is not a 60 s stall (min-stall 5)."""
    sup, clock, jobs = _stepping(tmp_path, steps=10, on_hang=OnHang.KILL)
    real_wait = clock.wait
    paused = []

    def wait(wake: threading.Event, timeout_s: float) -> None:
        if jobs and jobs[0].printed == 5 and not paused:
            paused.append(clock.t)
            clock.t += 60.0  # this wait lasted 60 s longer: the machine was paused
            jobs[0].started += 60.0  # and the job with it: its own schedule resumes where it was
        real_wait(wake, timeout_s)
        if jobs and jobs[0].printed >= 10:
            jobs[0].code = 0

    clock.wait = wait  # type: ignore[method-assign]
    assert sup.run() == 0
    events = _events(tmp_path)
    pauses = [e for e in events if e["event"] == "pause"]
    assert len(pauses) == 1 and 59.0 <= pauses[0]["seconds"] <= 61.0, pauses
    assert not [e for e in events if e["event"] in ("suspect", "incident", "action")]

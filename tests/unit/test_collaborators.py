"""The run loop's collaborators, each on its own: a RunContext of a real run directory, a scripted job and
a clock that moves only when told. The whole loop is test_run_loop's; real processes are test_run_e2e's."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import pytest

from hangwatch.errors import CaptureError
from hangwatch.records.evidence import Evidence
from hangwatch.records.incident import Cause, Finding, Verdict, Where
from hangwatch.records.run import CaptureRequest, Decision, OnHang, RunState
from hangwatch.recover.exitcode import EXIT_STOPPED, ExitReason, remote_status
from hangwatch.supervise.attempt import (
    Attempt,
    AttemptEnd,
    CaptureNow,
    Declare,
    EndJob,
    LookAt,
    Outcome,
    Resume,
    StartupProbes,
)
from hangwatch.supervise.books.books import RunAccounts
from hangwatch.supervise.config import Fallback, RunConfig
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.job.plan import plan_attempt
from hangwatch.supervise.job.signals import SignalInbox
from hangwatch.supervise.nodes.follow import FOLLOW_WINDOW_S, Follower
from hangwatch.supervise.nodes.round import NodeRounds
from hangwatch.supervise.progress.checkpoints import Checkpoint
from hangwatch.supervise.progress.detector import Progress, StallDetector, State, Strength
from hangwatch.supervise.progress.intake import Intake
from hangwatch.supervise.progress.tracking import Tracker
from hangwatch.supervise.stall import capturing
from hangwatch.supervise.stall.act import IncidentHandler
from hangwatch.supervise.stall.capturing import Capturer
from hangwatch.supervise.stall.judgement import Judgement
from hangwatch.supervise.stall.look import Looker
from hangwatch.supervise.stall.startup import StartupProbe
from hangwatch.supervise.stall.suspect import SuspectJudge
from hangwatch.supervise.supervisor import apply_outcome, looker, open_run, take_progress
from unit.test_run_logic import detector_config
from unit.test_run_loop import FakeClock, ScriptedJob


def _ctx(tmp_path: Path, **cfg: object) -> RunContext:
    settings: dict[str, object] = {"min_stall": 5.0, "startup_grace": 20.0, "kill_grace": 1.0, **cfg}
    config = RunConfig(argv=["train"], run_dir=tmp_path / "run", **settings)  # type: ignore[arg-type]
    return open_run(config, FakeClock())


def _attempt(ctx: RunContext, n: int = 1, steps: int = 0, **kw: object) -> Attempt:
    now = ctx.clock.now()
    job = ScriptedJob(ctx.clock, ctx.intake.on_chunk, steps, started=now)  # type: ignore[arg-type]
    det = StallDetector(detector_config(min_stall=ctx.cfg.min_stall, startup_grace=ctx.cfg.startup_grace), now)
    a = Attempt(
        n,
        ["train"],
        now,
        job,
        det,
        action=ctx.cfg.on_hang,
        startup=StartupProbes(next_probe_at=now + ctx.cfg.min_stall),
        **kw,
    )  # type: ignore[arg-type]
    ctx.attempts.append(a)
    return a


def _progress(ctx: RunContext, tracker: Tracker, a: Attempt, p: Progress) -> None:
    """One signal, taken as the run loop takes it."""
    take_progress(ctx, tracker, a, Intake((p,)))


def _events(ctx: RunContext) -> list[dict]:
    return [json.loads(ln) for ln in (ctx.cfg.run_dir / "events.jsonl").read_text().splitlines()]


def _applied(ctx: RunContext, a: Attempt, outcome: Outcome) -> AttemptEnd | None:
    """A collaborator's outcome, applied as the run loop applies it (the job ended there, and only there)."""
    cap = Capturer(ctx, _evidence)  # type: ignore[arg-type]
    return apply_outcome(IncidentHandler(ctx, RunAccounts(ctx), cap), looker(ctx, cap, Tracker(ctx)), a, outcome)


def _evidence(pid: int, window: float) -> Evidence:
    return Evidence(
        target_pid=pid, root_pid=pid, started_at=0.0, ended_at=window, clock_ticks=100, cpu_count=2, processes=()
    )


# --- signals ----------------------------------------------------------------------------------------------
def test_the_first_ctrl_c_is_passed_to_the_job_and_a_second_stops_it(tmp_path):
    ctx = _ctx(tmp_path)
    a = _attempt(ctx)
    inbox = SignalInbox(ctx)
    inbox._on_signal(signal.SIGINT, None)
    assert ctx.wake.is_set() and inbox.handle(a) is None
    assert a.job.signals == [signal.SIGINT] and ctx.final_state is None  # type: ignore[attr-defined]
    inbox._on_signal(signal.SIGINT, None)
    asked = inbox.handle(a)
    assert isinstance(asked, EndJob) and a.job.signals == [signal.SIGINT]  # type: ignore[attr-defined]
    end = _applied(ctx, a, asked)
    assert end is not None and end.status is not None and end.status.reason == ExitReason.SIGNAL
    assert a.job.signals == [signal.SIGINT, signal.SIGTERM] and end.final_state == RunState.STOPPED  # type: ignore[attr-defined]
    assert [e["event"] for e in _events(ctx)] == ["signal", "signal", "terminate"]


def test_handlers_are_installed_on_the_main_thread_only_and_restored(tmp_path):
    inbox = SignalInbox(_ctx(tmp_path))
    before = signal.getsignal(signal.SIGTERM)
    with inbox.installed():
        assert signal.getsignal(signal.SIGTERM) == inbox._on_signal
    assert signal.getsignal(signal.SIGTERM) == before
    seen: list[object] = []

    def off_main() -> None:
        with inbox.installed():
            seen.append(signal.getsignal(signal.SIGTERM))

    t = threading.Thread(target=off_main)
    t.start()
    t.join(5)
    assert seen == [before]


# --- the plan of an attempt -------------------------------------------------------------------------------
def test_a_restart_is_planned_with_its_fallback_the_checkpoint_and_hangwatch_env(tmp_path):
    ctx = _ctx(
        tmp_path, fallbacks=(Fallback("--workers 0", {"CKPT": "{checkpoint}"}),), resume_arg="--resume {checkpoint}"
    )
    first = plan_attempt(ctx, 1, {"KEEP": "1"})
    assert first.argv == ["train"] and first.checkpoint is None and not first.given
    assert first.env["KEEP"] == "1" and first.env["HANGWATCH_ATTEMPT"] == "1" and "CKPT" not in first.env
    ctx.checkpoints.append(Checkpoint(at=1.0, path="/ck/step10.pt", step=10, kind="torch.save", attempt=1))
    second = plan_attempt(ctx, 2, {})
    assert second.argv == ["train", "--workers", "0", "--resume", "/ck/step10.pt"], second.argv
    assert second.env["CKPT"] == "/ck/step10.pt" and second.given and second.checkpoint is ctx.checkpoints[-1]
    (resume,) = [e for e in _events(ctx) if e["event"] == "resume"]
    assert resume["checkpoint"]["step"] == 10


def test_without_a_checkpoint_the_resume_arg_is_left_out(tmp_path):
    ctx = _ctx(tmp_path, resume_arg="--resume {checkpoint}")
    plan = plan_attempt(ctx, 2, {})
    assert plan.argv == ["train"] and not plan.given


# --- tracking ---------------------------------------------------------------------------------------------
def test_progress_runs_the_clock_and_a_restart_from_zero_past_a_checkpoint_is_counted_and_warned(tmp_path):
    ctx = _ctx(tmp_path)
    tracker = Tracker(ctx)
    first = _attempt(ctx)
    for step in (1, 2, 3, 4, 5, 6):
        ctx.clock.t += 1  # type: ignore[attr-defined]
        _progress(ctx, tracker, first, Progress(ctx.clock.now(), step, "counter", Strength.COUNTER))
    assert first.detector.state == State.PROGRESSING and ctx.ledger.last_step == 6 and first.steps.progressed
    ck = Checkpoint(at=ctx.clock.now(), path="/ck/5.pt", step=5, kind="torch.save", attempt=1)
    second = _attempt(ctx, 2, resume=Resume(ck, False))
    _progress(ctx, tracker, second, Progress(ctx.clock.now() + 1, 1, "counter", Strength.COUNTER))
    kinds = {e["event"]: e for e in _events(ctx)}
    assert kinds["redone"]["steps"] == 6 and kinds["from_zero"]["checkpoint"]["path"] == "/ck/5.pt"
    assert ctx.ledger.redone_steps == 6 and ctx.ledger.redone_seconds > 0


def test_a_resumed_trainers_first_step_is_its_first_beat_not_the_bars_zero(tmp_path):
    """A Trainer resumed at step 20 draws its bar at 0/40 before it jumps to 21/40; the heartbeat carries the
    global step. Whichever arrives first, the attempt's first step is 21 (the log's 0 only until a beat)."""
    for order in (("counter", "beat"), ("beat", "counter")):
        ctx = _ctx(tmp_path / order[0])
        tracker, a = Tracker(ctx), _attempt(ctx)
        signals = {
            "counter": Progress(ctx.clock.now() + 1, 0, "counter", Strength.COUNTER),
            "beat": Progress(ctx.clock.now() + 1, 21, "heartbeat", Strength.HEARTBEAT),
        }
        for kind in order:
            _progress(ctx, tracker, a, signals[kind])
        _progress(ctx, tracker, a, Progress(ctx.clock.now() + 2, 22, "heartbeat", Strength.HEARTBEAT))
        assert (a.steps.first_step, a.steps.last_step) == (21, 22), order


def test_checkpoints_are_read_one_round_late_and_all_at_the_end(tmp_path):
    ctx = _ctx(tmp_path)
    tracker = Tracker(ctx)
    a = _attempt(ctx)
    log = ctx.rundir.heartbeat_dir / "checkpoints.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(json.dumps({"at": 1.0, "path": "/ck/a", "kind": "lightning", "step": 7}) + "\n")
    tracker.take_checkpoints(a)
    assert ctx.checkpoints == []  # its step's output may still be in the pumps
    tracker.take_checkpoints(a)
    assert [(c.path, c.step) for c in ctx.checkpoints] == [("/ck/a", 7)]
    with log.open("a") as f:
        f.write(json.dumps({"at": 2.0, "path": "/ck/b", "kind": "lightning", "step": 9}) + "\n")
    tracker.flush_checkpoints(a)
    assert [c.step for c in ctx.checkpoints] == [7, 9]


# --- capturing --------------------------------------------------------------------------------------------
def test_a_capture_that_never_returns_is_abandoned_and_no_second_one_starts(tmp_path, monkeypatch):
    monkeypatch.setattr(capturing, "CAPTURE_SLACK_S", 0.2)
    release = threading.Event()

    def frozen(pid: int, window: float) -> Evidence:
        release.wait(10)
        return _evidence(pid, window)

    ctx = _ctx(tmp_path, capture_window=0.1)
    cap = Capturer(ctx, frozen)
    t = time.monotonic()
    with pytest.raises(CaptureError, match="did not return"):
        cap.bounded(4242)
    assert time.monotonic() - t < 3
    with pytest.raises(CaptureError, match="still stuck"):
        cap.bounded(4242)
    release.set()
    assert any(e["event"] == "capture_abandoned" for e in _events(ctx))


def test_a_capture_bug_is_written_down_by_the_loops_thread_and_returned_as_a_failed_look(tmp_path):
    """A bug in a capture is a failed look, not a failed loop: the capture's thread only hands it over; the
    internal_error and the capture_failed events are written in the thread that asked (the loop's)."""
    writers: list[str] = []

    def broken(pid: int, window: float) -> Evidence:
        raise KeyError("no such field")

    ctx = _ctx(tmp_path, capture_window=0.1)
    event = ctx.rundir.event
    ctx.rundir.event = lambda *a, **k: writers.append(threading.current_thread().name) or event(*a, **k)  # type: ignore[method-assign]
    got = Capturer(ctx, broken).look(4242)
    assert isinstance(got, CaptureError) and "KeyError" in got.message
    assert [e["event"] for e in _events(ctx)] == ["internal_error", "capture_failed"]
    assert writers == [threading.current_thread().name] * 2


def test_the_capture_window_is_a_quarter_of_min_stall_within_1_to_5_s(tmp_path):
    assert Capturer(_ctx(tmp_path)).window() == 1.25
    assert Capturer(_ctx(tmp_path / "b", min_stall=60.0)).window() == 5.0
    assert Capturer(_ctx(tmp_path / "c", capture_window=0.5)).window() == 0.5


# --- books --------------------------------------------------------------------------------------------------
def test_books_stop_a_job_over_budget_once_the_projection_holds(tmp_path):
    ctx = _ctx(tmp_path, budget=0.01, cost_per_hour=3600.0, stop_over_budget=True, total_steps=1000, min_stall=1.0)
    books = RunAccounts(ctx)
    tracker = Tracker(ctx)
    a = _attempt(ctx)
    end = None
    for step in range(1, 40):
        ctx.clock.t += 1  # type: ignore[attr-defined]
        _progress(ctx, tracker, a, Progress(ctx.clock.now(), step, "counter", Strength.COUNTER))
        end = _applied(ctx, a, books.tick(a, ctx.clock.now(), None))
        if end is not None:
            break
    assert end is not None and end.code == EXIT_STOPPED and end.final_state == RunState.STOPPED
    assert end.status is not None and end.status.reason == ExitReason.OVER_BUDGET
    assert json.loads((ctx.cfg.run_dir / "summary.json").read_text())["last_step"] >= 1


def test_books_leave_an_ended_round_alone(tmp_path):
    ctx = _ctx(tmp_path, budget=0.01, stop_over_budget=True)
    books, a = RunAccounts(ctx), _attempt(ctx)
    sentinel = object()
    assert books.tick(a, ctx.clock.now(), sentinel) is sentinel  # type: ignore[arg-type]


# --- other nodes --------------------------------------------------------------------------------------------
class FakeNodes:
    node = 1

    def __init__(self, news: object) -> None:
        self.news = news

    def tick(self, attempt: int, state: str, step: int | None, now: float) -> object:
        return self.news


def test_a_node_follows_another_nodes_decision_with_its_exit(tmp_path):
    ctx = _ctx(tmp_path, on_hang=OnHang.REPORT)
    ctx.nodes = FakeNodes(Decision(0, OnHang.KILL, "code.deadlock", 125, "hung_final", "twice"))  # type: ignore[assignment]
    a = _attempt(ctx)
    end = _applied(ctx, a, NodeRounds(ctx).tick(a, ctx.clock.now()))
    assert end is not None and (end.code, end.status) == (
        125,
        remote_status(Decision(0, OnHang.KILL, "code.deadlock", 125, "hung_final", "twice")),
    )
    assert a.job.code is not None and end.final_state == RunState.HUNG  # type: ignore[attr-defined]
    assert [e["action"] for e in _events(ctx) if e["event"] == "action"] == ["kill"]


def test_a_node_that_follows_another_nodes_decision_writes_its_own_incident_first(tmp_path):
    """Evidence before action on every node: the loop looks at this node's part for the follower, which merges
    every node's summary (the decider's finding) and writes its incident, with the decision in it, before the loop
    ends its part."""
    from hangwatch.supervise.nodes.protocol import Merged

    class Nodes(FakeNodes):
        def merge(self, attempt: int, evidence: Evidence, diagnosis: object, window_s: float, now: float) -> Merged:
            return Merged(diagnosis, (0, 1), None)  # type: ignore[arg-type]

        def finding_of(self, attempt: int, node: int) -> dict | None:
            return seen.to_dict() if node == 0 else None

    ctx = _ctx(tmp_path, on_hang=OnHang.KILL)
    why = "distributed.peer_stuck at train.py:21: first time this cause was seen"
    # The decider's root is stored beside its decision: this node's late look (merged: nothing) does not replace it.
    seen = Finding(
        Cause.DISTRIBUTED_PEER_STUCK,
        0.95,
        "Rank 1 on node 0 is stuck in load_shard (train.py:21) while 1 rank(s) on node(s) [1] wait in a collective.",
        Where(pid=41, rank=1, tid=41, file="/src/train.py", line=21, function="load_shard"),
    )
    ctx.nodes = Nodes(Decision(0, OnHang.KILL, "distributed.peer_stuck", 124, "hung_requeue", why))  # type: ignore[assignment]
    a = _attempt(ctx)
    _, _, acts, _ = _team(ctx)
    asked = NodeRounds(ctx, Follower(ctx, acts.recorder)).tick(a, ctx.clock.now())
    assert isinstance(asked, LookAt) and asked.window == FOLLOW_WINDOW_S  # the loop takes the look, not the follower
    end = _applied(ctx, a, asked)
    assert end is not None and end.code == 124 and a.job.code is not None  # type: ignore[attr-defined]
    kinds = [e["event"] for e in _events(ctx)]
    assert kinds.index("incident") < kinds.index("terminate"), kinds
    incident = json.loads((ctx.cfg.run_dir / "incidents" / "001" / "incident.json").read_text())
    assert (incident["verdict"], incident["action"]) == ("hung", "killed")
    root = incident["findings"][0]
    assert f"node 0 decided to kill the job: {why}" in root["evidence"]
    assert (root["cause"], root["where"]["rank"], root["where"]["line"]) == ("distributed.peer_stuck", 1, 21)
    assert len(incident["findings"]) > 1  # this node's own look follows it


def test_a_capture_request_makes_the_attempt_suspect_once(tmp_path):
    ctx = _ctx(tmp_path)
    ctx.nodes = FakeNodes(CaptureRequest(0, 1))  # type: ignore[assignment]
    a = _attempt(ctx)
    rounds = NodeRounds(ctx)
    asked = rounds.tick(a, ctx.clock.now())
    assert isinstance(asked, CaptureNow) and a.node.captured_for_peer
    assert _applied(ctx, a, asked) is None
    assert a.detector.state == State.SUSPECT
    assert rounds.tick(a, ctx.clock.now()) is None  # not due again within COORD_EVERY_S


# --- suspect, startup probe, act ------------------------------------------------------------------------------
def _team(ctx: RunContext, capture: object = _evidence) -> tuple[SuspectJudge, StartupProbe, IncidentHandler, Looker]:
    """The judges, the incident handler, and the loop's look (a judge asks for one: ``LookAt``)."""
    books, cap, tracker = RunAccounts(ctx), Capturer(ctx, capture), Tracker(ctx)  # type: ignore[arg-type]
    suspects = SuspectJudge(ctx, cap)
    return suspects, StartupProbe(ctx, suspects), IncidentHandler(ctx, books, cap), looker(ctx, cap, tracker)


def test_a_suspect_that_cannot_be_captured_is_retried_later_not_declared(tmp_path):
    def gone(pid: int, window: float) -> Evidence:
        raise CaptureError("gone", "")

    ctx = _ctx(tmp_path)
    suspects, _, acts, look = _team(ctx, gone)
    a = _attempt(ctx)
    a.detector.suspect_now()
    asked = suspects.on_suspect(a, ctx.clock.now())
    assert isinstance(asked, LookAt) and not _events(ctx)[-1]["event"].startswith("capture")  # the loop looks
    assert apply_outcome(acts, look, a, asked) is None
    assert a.suspicion.capture_retry_at > ctx.clock.now() and a.detector.state == State.SUSPECT
    # the look carries its error back; the capturer alone wrote it down, once, with what happened and what is done
    failed = [e for e in _events(ctx) if e["event"] == "capture_failed"]
    assert [(e["pid"], e["error"]) for e in failed] == [(a.job.pid, "gone")], failed
    assert not (ctx.cfg.run_dir / "incidents").exists() or not list((ctx.cfg.run_dir / "incidents").iterdir())


def test_a_probe_is_due_every_min_stall_within_the_grace(tmp_path):
    ctx = _ctx(tmp_path)
    _, probe, _, _ = _team(ctx)
    a = _attempt(ctx)
    now = ctx.clock.now()
    assert not probe.due(a, now) and probe.due(a, now + 5) and not probe.due(a, now + 20)


def test_a_declared_hang_is_recorded_before_the_job_is_ended_with_the_exit_contract(tmp_path):
    ctx = _ctx(tmp_path, on_hang=OnHang.KILL)
    _, _, acts, look = _team(ctx)
    a = _attempt(ctx)
    from hangwatch.diagnose import Diagnosis

    root = Finding(cause="code.deadlock", confidence=0.9, summary="two locks", where=None, fix=("one order",))
    judged = Judgement(a, _evidence(4242, 1.0), Diagnosis(Verdict.HUNG, (root,)), ctx.clock.now(), 30.0)
    end = apply_outcome(acts, look, a, Declare(judged))
    # A deadlock is a bug in the job's code: a requeue would hang again, so 125 the first time.
    assert end is not None and end.code == 125 and a.detector.state == State.HUNG
    assert "a requeue would hang there again" in (end.status.why if end.status else "")
    kinds = [e["event"] for e in _events(ctx)]
    assert kinds.index("incident") < kinds.index("terminate") < kinds.index("action")
    assert ctx.ledger.incidents == 1 and ctx.incident_counts[("code.deadlock", "hung")] == 1

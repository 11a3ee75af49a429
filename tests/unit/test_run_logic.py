"""The supervisor's logic without processes: progress parsing, the stall state machine, fallbacks,
heartbeats, crash texts. Given / when / then."""

from __future__ import annotations

import importlib
import re
from types import SimpleNamespace

import pytest

from hangwatch.diagnose.crash import diagnose_crash
from hangwatch.errors import UsageError
from hangwatch.recover.fallback import apply_fallback, command_for_attempt
from hangwatch.supervise.config import build_config
from hangwatch.supervise.options import DEFAULTS
from hangwatch.supervise.progress.counters import OutputTail, ProgressParser
from hangwatch.supervise.progress.detector import DetectorConfig, Progress, StallDetector, State, Strength
from hangwatch.supervise.progress.heartbeat import read_heartbeats

# --- progress parsing ----------------------------------------------------------------------------------


class Output:
    """The supervisor's path: pumps append chunks to an OutputTail, each poll parses the tail."""

    def __init__(self, extra: re.Pattern[str] | None = None) -> None:
        self.tail, self.parser = OutputTail(), ProgressParser(extra)

    def poll(self, chunk: bytes):
        self.tail.add(chunk, at=0.0)
        return self.parser.latest(self.tail.snapshot()[2])


@pytest.mark.parametrize(
    ("text", "step"),
    [
        (b"Epoch 1:   0%|          | 0/18968 [00:00<?, ?it/s]", 0),
        (b"\rEpoch 1:  45%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x8c  | 45/100 [00:05<00:06,  8.91it/s, loss=0.2]", 45),
        (b"Epoch 0:  12%|#2 | 12/100 [00:03<00:22, 3.9it/s, v_num=0, train_loss=1.23]", 12),
        (b" 45/100 [=============>................] - ETA: 3s - loss: 0.2310", 45),
        (b"45/100 \xe2\x94\x81\xe2\x94\x81\xe2\x94\x81\xe2\x94\x81 3s 30ms/step - loss: 0.2", 45),
        (b"Training \xe2\x94\x81\xe2\x94\x81\xe2\x94\x81\xe2\x95\xb8\xe2\x94\x81\xe2\x94\x81 45/100 0:00:05", 45),
        (b"step 1200 | loss 2.31 | lr 3e-4", 1200),
        (b"iter 77: loss 1.9", 77),
        (b"[train] global_step=31 loss=0.4", 31),
        (b"processed 31/64 shards", 31),
        (b"\x1b[32mstep 5\x1b[0m loss 0.1", 5),
    ],
)
def test_progress_forms(text, step):
    c = Output().poll(text + b"\n")
    assert c is not None and c.step == step


def test_hf_trainer_log_dict_is_progress_without_a_step():
    c = Output().poll(b"{'loss': 2.3121, 'grad_norm': 1.2, 'learning_rate': 5e-05, 'epoch': 0.25}\n")
    assert c is not None and (c.source, c.step) == ("hf_trainer", None)


def test_redraw_without_a_new_count_is_not_progress():
    out = Output()
    assert out.poll(b"\r 5/100 [00:01<00:20, 4.1it/s]") is not None
    assert out.poll(b"\r 5/100 [00:02<00:20, 4.0it/s]") is None  # same count, new timing
    assert out.poll(b"\r 6/100 [00:02<00:19, 4.0it/s]").step == 6


def test_a_record_split_across_chunks_is_parsed_whole():
    tail, p = OutputTail(), ProgressParser()
    tail.add(b"noise\nste", at=1.0)
    assert p.latest(tail.snapshot()[2]) is None
    tail.add(b"p 41 loss 1\n", at=2.0)
    seq, at, data = tail.snapshot()
    assert (seq, at, p.latest(data).step) == (2, 2.0, 41)


def test_the_tail_keeps_only_the_newest_bytes():
    tail = OutputTail()
    tail.add(b"step 1\n" + b"x" * 100_000, at=1.0)
    assert len(tail.snapshot()[2]) == 8192


def test_only_the_newest_records_of_a_huge_chunk_are_parsed():
    chunk = b"step 1\n" + b"x" * 5_000_000 + b"\nstep 2\n"
    assert Output().poll(chunk).step == 2


def test_user_regex_wins():
    c = Output(re.compile(r"done (?P<step>\d+) samples")).poll(b"step 9 done 128 samples\n")
    assert (c.source, c.step) == ("regex", 128)  # not the built-in `step 9`


def test_plain_text_is_no_counter():
    assert Output().poll(b"Loading model weights...\nwarning: something\n") is None


# --- the stall detector ---------------------------------------------------------------------------------


def detector_config(**kw: float) -> DetectorConfig:
    """The detector's thresholds: the run's defaults, with ``kw`` instead."""
    return DetectorConfig.of(SimpleNamespace(**DEFAULTS), **kw)


CFG = detector_config(min_stall=10, startup_grace=60, max_slow=100)


def steps(det: StallDetector, times: list[float], strength: Strength = Strength.COUNTER) -> None:
    for i, t in enumerate(times):
        det.progress(Progress(t, i, "tqdm", strength))


@pytest.mark.parametrize("poll", [0.25, 0.5, 1.0])
def test_the_history_is_the_jobs_own_intervals_whatever_the_poll_rate(poll):
    """A job beating every 0.05 s, read by rounds of 0.25, 0.5 or 1 s: each round counts the beats it saw, so the
    median is the job's 0.05 s and 2 s of steps are enough history at any rate (at 0.5 s a round, 4 rounds gave 4
    intervals, under the 8 a history needs, and a spin waited for --max-slow); the longest is the whole gap."""
    det = StallDetector(CFG, started_at=0)
    beats, at = 0, 0.0
    det.progress(Progress(at, 0, "heartbeat", Strength.HEARTBEAT))
    for _ in range(round(2 / poll)):
        at += poll
        n = round(poll / 0.05)
        beats += n
        det.progress(Progress(at, beats, "heartbeat", Strength.HEARTBEAT, n))
    assert det.median_interval() == pytest.approx(0.05)
    assert det.history_bound() is not None
    assert det.longest == pytest.approx(poll)


def test_a_burst_of_steps_after_a_long_pause_keeps_the_pause_as_one_interval():
    """Steps every 0.05 s, then 60 s of evaluation, then 10 steps seen in one round: the history holds the 60 s
    gap (less the nine usual intervals), not ten intervals of 6 s: the stall threshold still knows the pause."""
    det = StallDetector(CFG, started_at=0)
    det.progress(Progress(0.0, 0, "heartbeat", Strength.HEARTBEAT))
    at, step = 0.0, 0
    for _ in range(8):
        at, step = at + 0.5, step + 10
        det.progress(Progress(at, step, "heartbeat", Strength.HEARTBEAT, 10))
    at, step = at + 60.0, step + 10
    det.progress(Progress(at, step, "heartbeat", Strength.HEARTBEAT, 10))
    assert max(det.intervals) == pytest.approx(60.0 - 9 * 0.05)
    assert det.median_interval() == pytest.approx(0.05)
    assert det.longest == pytest.approx(60.0)


def test_startup_grace_before_first_progress():
    det = StallDetector(CFG, started_at=0)
    assert not det.check(59.9)
    assert det.check(60.1) and det.state == State.SUSPECT


def test_launcher_chatter_does_not_end_the_startup_grace():
    det = StallDetector(CFG, started_at=0)
    det.progress(Progress(1, None, "output", Strength.OUTPUT))  # "W... Setting OMP_NUM_THREADS ..."
    assert det.state == State.STARTING
    assert not det.check(30)  # well past min_stall after that line, still inside the grace
    assert det.check(60.5)
    det2 = StallDetector(CFG, started_at=0)
    det2.progress(Progress(1, None, "output", Strength.OUTPUT))
    det2.progress(Progress(2, 0, "tqdm", Strength.COUNTER))
    assert det2.state == State.PROGRESSING and det2.check(12.5)


def test_step_intervals_do_not_include_the_gap_before_the_first_counter():
    det = StallDetector(CFG, started_at=0)
    det.progress(Progress(1, None, "output", Strength.OUTPUT))
    steps(det, [40 + 0.1 * i for i in range(30)])  # 39 s of imports, then fast steps
    assert det.threshold() == 10


def test_output_only_job_after_the_grace_gets_a_normal_stall_threshold():
    det = StallDetector(CFG, started_at=0)
    det.progress(Progress(59, None, "output", Strength.OUTPUT))
    assert not det.check(65)  # the grace passed, but the last line is only 6 s old
    assert det.check(69.5)


def test_min_stall_in_steady_state():
    det = StallDetector(CFG, started_at=0)
    steps(det, [1, 2, 3, 4, 5])
    assert det.threshold() == 10
    assert not det.check(14.9)
    assert det.check(15.1)


def test_threshold_adapts_to_slow_steps():
    det = StallDetector(CFG, started_at=0)
    steps(det, [i * 8.0 for i in range(40)])  # a step every 8 s: 3 x 8 s = 24 s > min_stall
    assert det.threshold() == pytest.approx(24)
    assert not det.check(312 + 23)
    assert det.check(312 + 25)


def test_one_slow_step_among_fast_ones_moves_the_percentile_only_a_little():
    det = StallDetector(CFG, started_at=0)
    times = [i * 0.1 for i in range(200)]
    times.append(times[-1] + 6)  # a single 6 s hiccup
    steps(det, times)
    assert det.threshold() == 10  # p99 of 200 intervals ignores one outlier


def test_declared_phase_has_its_own_deadline():
    det = StallDetector(CFG, started_at=0)
    steps(det, [1, 2, 3])
    det.set_phase("validation", deadline=300)
    assert not det.check(200)
    assert det.check(301)


def test_weaker_signals_do_not_count_once_a_stronger_one_was_seen():
    det = StallDetector(CFG, started_at=0)
    steps(det, [1, 2], Strength.HEARTBEAT)
    assert not det.progress(Progress(5, None, "output", Strength.OUTPUT))
    assert det.check(12.5)


def test_alive_job_is_extended_within_a_bound():
    det = StallDetector(CFG, started_at=0)
    steps(det, [1, 2])
    assert det.check(13)
    extensions = 0
    now = 13.0
    while det.extend(now):
        extensions += 1
        now += 10
        assert not det.check(now - 0.5)
        assert det.check(now + 0.5)
    assert extensions == 10  # max_slow 100 / threshold 10


def test_progress_after_hung_recovers():
    det = StallDetector(CFG, started_at=0)
    steps(det, [1])
    assert det.check(20)
    det.declare_hung()
    assert not det.check(40)
    assert det.progress(Progress(41, 2, "tqdm", Strength.COUNTER))
    assert det.state == State.PROGRESSING


def test_the_same_line_again_but_its_clock_is_no_progress_and_a_line_with_a_new_number_is(tmp_path):
    """A poll that logs `INFO waiting for /data/ready` each second, its child long dead, reset the stall clock at every
    line, so the job was never noticed. The same record again, word for word but a date and time of day that are the
    wall clock's, is a repeat: no progress, as silence is not (a look decides). Still progress: a new word or number
    (a loss), a new line that came with repeats in one poll, a time that is not the clock's (a frame's), blank
    output, a line longer than the tail, and the first lines of a restart."""
    import time as clock

    from hangwatch.supervise.progress.intake import ProgressIntake

    intake, det = ProgressIntake(None, tmp_path), StallDetector(CFG, started_at=0)
    stamp = clock.strftime("%Y-%m-%d %H:%M:%S", clock.localtime()).encode()

    def poll(chunk: bytes, at: float) -> Progress:
        intake.on_chunk(chunk, at)
        return next(p for p in intake.poll().signals if p.strength == Strength.OUTPUT)

    line = stamp + b",%03d INFO waiting for /tmp/tmpab12/ready\n"
    outputs = [poll(line % n, float(n)) for n in range(1, 5)]
    assert [p.repeat for p in outputs] == [False, True, True, True]
    assert det.progress(outputs[0]) and not any(det.progress(p) for p in outputs[1:])
    for n, text in ((5, b" INFO loss=0.53\n"), (6, b" INFO loss=0.51\n")):
        signal = poll(stamp + text, float(n))
        assert not signal.repeat and det.progress(signal), text
    assert not poll(b"INFO epoch finished, saved model\n" + b"".join(line % n for n in range(5, 12)), 7.0).repeat
    assert poll(line % 12, 8.0).repeat
    assert not poll(b"decoded frame at 00:01:24.456\n", 9.0).repeat
    assert not poll(b"decoded frame at 00:01:25.456\n", 10.0).repeat
    assert not poll(b"\n\n", 11.0).repeat
    long = b"step %d " + b"x" * 9000 + b" done\n"
    assert not poll(long % 1, 12.0).repeat and not poll(long % 2, 13.0).repeat
    assert poll(line % 13, 14.0).repeat
    intake.new_attempt()
    assert not poll(line % 14, 15.0).repeat


def test_the_same_output_again_after_a_declared_hang_is_no_recovery():
    """A job whose only signal is its output, declared hung (a pool whose workers die in their initializer prints the
    same traceback hundreds of times a second): that output again does not end the hang; a new line does, and so
    does a counter."""
    det = StallDetector(CFG, started_at=0)
    det.progress(Progress(1, None, "output", Strength.OUTPUT))
    assert det.state == State.STARTING
    det.declare_hung()
    assert not det.progress(Progress(2, None, "output", Strength.OUTPUT, fresh=False))
    assert det.state == State.HUNG
    assert det.progress(Progress(3, None, "output", Strength.OUTPUT, fresh=True))
    assert det.state == State.PROGRESSING
    det.declare_hung()
    assert det.progress(Progress(4, 4, "tqdm", Strength.COUNTER))
    assert det.state == State.PROGRESSING


# --- fallbacks --------------------------------------------------------------------------------------------


def test_fallback_replaces_present_options_and_appends_new_ones():
    argv = ["python", "train.py", "--workers", "2", "--lr=3e-4", "--compile"]
    assert apply_fallback(argv, "--workers 0 --lr=1e-4 --no_compile --seed -1") == [
        "python",
        "train.py",
        "--workers",
        "0",
        "--lr=1e-4",
        "--compile",
        "--no_compile",
        "--seed",
        "-1",
    ]


def test_fallbacks_apply_cumulatively_per_restart():
    argv = ["python", "t.py", "--workers", "4"]
    fbs = ["--workers 2", "--workers 0 --persistent_workers false"]
    assert command_for_attempt(argv, fbs, 1) == argv
    assert command_for_attempt(argv, fbs, 2) == ["python", "t.py", "--workers", "2"]
    assert command_for_attempt(argv, fbs, 3) == ["python", "t.py", "--workers", "0", "--persistent_workers", "false"]
    assert command_for_attempt(argv, fbs, 9) == command_for_attempt(argv, fbs, 3)


# --- heartbeats ---------------------------------------------------------------------------------------------


def test_beat_is_a_no_op_outside_hangwatch(monkeypatch, tmp_path):
    beat = importlib.import_module("hangwatch.beat")
    monkeypatch.delenv("HANGWATCH_HEARTBEAT_DIR", raising=False)
    importlib.reload(beat)
    beat.beat(1)
    with beat.phase("x", timeout=5):
        pass
    assert beat._slot is None


def test_beat_and_phase_are_read_back(monkeypatch, tmp_path):
    beat = importlib.import_module("hangwatch.beat")
    monkeypatch.setenv("HANGWATCH_HEARTBEAT_DIR", str(tmp_path))
    monkeypatch.setenv("RANK", "3")
    importlib.reload(beat)
    try:
        beat.beat(41)
        beat.beat(42)
        (hb,) = read_heartbeats(tmp_path)
        assert (hb.step, hb.count, hb.rank, hb.phase) == (42, 2, 3, None)
        with beat.phase("checkpoint", timeout=600):
            (hb,) = read_heartbeats(tmp_path)
            assert hb.phase == "checkpoint" and hb.phase_deadline == pytest.approx(hb.phase_started + 600)
        (hb,) = read_heartbeats(tmp_path)
        assert hb.phase is None and hb.count == 4
    finally:
        monkeypatch.delenv("HANGWATCH_HEARTBEAT_DIR")
        importlib.reload(beat)


# --- crash texts ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code", "cause"),
    [
        ("RuntimeError: DataLoader worker (pid 7524) is killed by signal: Killed.", 1, "dataloader.worker_died"),
        ("RuntimeError: DataLoader worker (pid(s) 7524) exited unexpectedly", 1, "dataloader.worker_died"),
        ("RuntimeError: DataLoader worker (pid(s) 7524, 7525) exited unexpectedly", 1, "dataloader.worker_died"),
        (
            '  File "/v/torch/multiprocessing/reductions.py", line 538, in rebuild_storage_fd\n    fd = df.detach()\n'
            '  File "/usr/lib/python3.11/multiprocessing/resource_sharer.py", line 86, in get_connection\n'
            "ConnectionResetError: [Errno 104] Connection reset by peer",
            1,
            "dataloader.worker_died",
        ),
        (
            "RuntimeError: DataLoader worker (pid 81) is killed by signal: Bus error. It is possible that dataloader's "
            "workers are out of shared memory.",
            1,
            "dataloader.worker_died",
        ),
        (
            "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1, "
            "NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.",
            1,
            "distributed.peer_stuck",
        ),
        (
            "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Timed out waiting 10000ms for recv "
            "operation to complete",
            1,
            "distributed.peer_stuck",
        ),
        (
            "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
            1,
            "distributed.rendezvous_wait",
        ),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", 1, "memory.oom"),
        ("RuntimeError: CUDA error: an illegal memory access was encountered", 1, "gpu.fault"),
        ("RuntimeError: CUDA error: out of memory", 1, "memory.oom"),  # (torch before 1.x said it so)
        # the job's own bug (labels past the classes), and a peer's or the network's: no GPU failure is named
        ("RuntimeError: CUDA error: device-side assert triggered", 1, "unknown"),
        (
            "DistBackendError: NCCL error in: NCCLUtils.hpp:275, remote process exited or there was a network error",
            1,
            "unknown",
        ),
        ("Traceback (most recent call last):\nValueError: bad config", 1, "unknown"),
        ("", -9, "memory.oom"),
    ],
)
def test_crash_texts(text, code, cause):
    assert diagnose_crash(code, text)[0].cause == cause


def test_cgroup_oom_kill_outranks_the_text():
    assert (
        diagnose_crash(1, "DataLoader worker (pid 3) is killed by signal: Killed.", oom_kills=1)[0].cause
        == "memory.oom"
    )


# --- settings -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"min_stall": "abc"}, "--min-stall must be a number"),
        ({"min_stall": "0"}, "--min-stall must be greater than 0"),
        ({"startup_grace": "-5"}, "--startup-grace must be at least 0"),
        ({"max_restarts": "1.5"}, "--max-restarts must be a whole number"),
        ({"on_hang": "explode"}, "--on-hang must be report, kill, restart or heal"),
        ({"progress_regex": "("}, "--progress-regex is not a valid regular expression"),
        ({"fallback": ("workers 0",)}, "is not a list of options"),
    ],
)
def test_bad_settings(options, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        build_config(["python", "-c", "pass"], options, None, use_pty=False)


def test_config_file_values_and_flag_precedence(tmp_path):
    cfg_file = tmp_path / "hw.toml"
    cfg_file.write_text(
        'min_stall = 60\non_hang = "restart"\nnotify = ["json://localhost/x"]\n'
        '[[fallback]]\nargs = "--workers 0"\nenv = {OMP_NUM_THREADS = "1"}\n'
    )
    cfg = build_config(["python", "t.py"], {"min_stall": "5"}, str(cfg_file), use_pty=False)
    assert (cfg.min_stall, cfg.on_hang.value, cfg.notify) == (5.0, "restart", ("json://localhost/x",))
    assert cfg.fallbacks[0].args == "--workers 0" and cfg.fallbacks[0].env == {"OMP_NUM_THREADS": "1"}


def test_unknown_config_key(tmp_path):
    cfg_file = tmp_path / "hw.toml"
    cfg_file.write_text("min_stal = 60\n")
    with pytest.raises(UsageError, match="unknown setting"):
        build_config(["python", "t.py"], {}, str(cfg_file), use_pty=False)


# --- multi-node topology ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (
            [
                "torchrun",
                "--nnodes",
                "2",
                "--node-rank",
                "1",
                "--master-addr",
                "10.0.0.5",
                "--master-port",
                "29500",
                "train.py",
                "--nnodes",
                "9",
            ],
            {},
            (2, 1, "10.0.0.5", 29501),
        ),
        (
            [
                "python",
                "-m",
                "torch.distributed.run",
                "--nnodes=1:4",
                "--node_rank=3",
                "--rdzv-endpoint",
                "head:29400",
                "train.py",
            ],
            {},
            (4, 3, "head", 29401),
        ),
        (
            ["python", "train.py"],
            {"NNODES": "2", "NODE_RANK": "0", "MASTER_ADDR": "h0", "MASTER_PORT": "1234"},
            (2, 0, "h0", 1235),
        ),
        (
            ["srun", "python", "train.py"],
            {"SLURM_NNODES": "3", "SLURM_NODEID": "2", "MASTER_ADDR": "n1"},
            (3, 2, "n1", 29501),
        ),
        (["torchrun", "--nproc-per-node", "4", "train.py"], {}, None),
    ],
)
def test_topology_from_the_launcher(argv, env, expected):
    from hangwatch.topology import detect

    t = detect(argv, env)
    assert (t and (t.nnodes, t.node_rank, t.host, t.port)) == expected


def test_rank_prefixed_output_gives_each_rank_its_counter():
    tail = b"[default0]:step 41 loss 1.0\n[default1]:step 38 loss 1.1\n[rank2]:iter 40\nplain line\n"
    got = ProgressParser().by_rank(tail)
    assert {r: c.step for r, c in got.items()} == {0: 41, 1: 38, 2: 40}


def test_heartbeats_that_stop_while_the_log_counter_advances_hand_over_to_the_counter():
    det = StallDetector(CFG, started_at=0)
    steps(det, [1, 2, 3], Strength.HEARTBEAT)  # e.g. a DataLoader used once at startup
    for t in range(4, 30):
        det.progress(Progress(float(t), t, "log:step", Strength.COUNTER))  # not counted while beats are stronger
    assert not det.check(14.0)  # beats stalled past min-stall, but the counter moved after them
    assert det.handovers and det.handovers[0][:2] == (Strength.HEARTBEAT, Strength.COUNTER)
    assert det.strength == Strength.COUNTER and det.last is not None and det.last.step == 29
    assert det.check(29 + 10.5)  # and now a counter stall is a stall


def test_a_progress_bar_redrawn_after_the_last_beat_does_not_take_over_from_the_beats():
    # A trainer's bar is drawn just after its step's beat (transformers' tqdm): the step it showed at the beat, or
    # the next, within 2 s. The beats stay the signal, and the incident says the last beat.
    det = StallDetector(CFG, started_at=0)
    for i, t in enumerate([1.0, 2.0, 3.0]):
        det.progress(Progress(t, i, "tqdm", Strength.HEARTBEAT))
        det.progress(Progress(t + 0.01, i, "log:n/N", Strength.COUNTER))  # not counted while beats are stronger
    det.progress(Progress(3.02, 2, "log:n/N", Strength.COUNTER))
    det.progress(Progress(3.5, 2, "log:n/N", Strength.COUNTER))  # the same step, its rate redrawn
    assert det.check(13.5) and not det.handovers
    assert det.last is not None and det.last.source == "tqdm" and det.last.step == 2


def test_a_counter_that_logs_seldom_after_the_beats_stop_still_takes_over():
    # Beats from a DataLoader used once at startup, then a loop that logs its step every 50 s: the counter's lines
    # come long after the last beat (no redraw of it), and the counter becomes the signal.
    det = StallDetector(detector_config(min_stall=120, startup_grace=60, max_slow=1800), started_at=0)
    steps(det, [0.1 * i for i in range(1, 41)], Strength.HEARTBEAT)
    det.progress(Progress(54.0, 1, "log:step", Strength.COUNTER))
    det.progress(Progress(104.0, 2, "log:step", Strength.COUNTER))
    assert not det.check(125.0)
    assert det.handovers and det.strength == Strength.COUNTER and det.last is not None and det.last.step == 2


def test_plain_output_never_takes_over_from_a_stalled_counter():
    det = StallDetector(CFG, started_at=0)
    steps(det, [1, 2, 3])
    for t in range(4, 30):
        det.progress(Progress(float(t), None, "output", Strength.OUTPUT))  # a chatty monitor thread
    assert det.check(13.5) and not det.handovers


def test_an_extension_holds_inside_a_phase_too():
    # A slow validation batch inside a phase: once extended, the job is not suspect again at once.
    det = StallDetector(CFG, started_at=0)
    steps(det, [1, 2, 3])
    det.set_phase("validation", None)
    assert det.check(14.0)
    assert det.extend(14.0)
    assert not det.check(14.5) and not det.check(20.0)
    assert det.check(24.5)  # the extension ends


def test_an_extension_holds_past_a_phase_deadline():
    det = StallDetector(CFG, started_at=0)
    steps(det, [1, 2, 3])
    det.set_phase("checkpoint", 30.0)
    assert not det.check(29.0) and det.check(31.0)
    assert det.extend(31.0)
    assert not det.check(35.0)


@pytest.mark.parametrize(
    ("since", "min_stall", "next_at"),
    [
        (15.0, 120.0, 30.0),
        (30.1, 120.0, 60.2),
        (61.0, 120.0, 120.0),
        (120.2, 120.0, 240.0),
        (250.0, 120.0, 360.0),
        (5.0, 5.0, 10.0),
        (15.0, 20.0, 20.0),
    ],
)
def test_early_startup_probes_double_their_gap_up_to_min_stall(since, min_stall, next_at):
    from hangwatch.supervise.stall.startup import next_probe_after

    assert next_probe_after(since, min_stall) == pytest.approx(next_at)


def test_a_crash_nothing_explains_says_the_jobs_last_line():
    """An exit nothing known explains (argparse rejecting the command line) says the output's last line, the fact a
    person reads first, in the summary (it was only in the evidence): from the redacted tail, never a secret."""
    tail = "usage: train.py [-h] --out OUT\ntrain.py: error: the following arguments are required: --out\n"
    [f] = diagnose_crash(2, tail)
    assert f.cause == "unknown" and f.summary.endswith(
        "no known failure text was found; its last line: 'train.py: error: the following arguments are required: --out'."
    ), f.summary
    assert diagnose_crash(1, "")[0].summary == "The job exited with status 1; no known failure text was found."


def test_a_line_a_read_cut_is_no_new_output_and_a_new_bar_frame_is(tmp_path):
    """The pump passes on what one read returned, which may end half way through a line: a crash loop's traceback,
    the same lines again and again, read so showed a "new" line, and report mode said the hang had ended. A record
    that is the start of one seen recently (digits masked), with no line end after it, is not new; a progress bar's
    new frame (no line end either) still is."""
    from hangwatch.supervise.progress.intake import ProgressIntake

    intake = ProgressIntake(None, tmp_path)
    loop = b"Process ForkPoolWorker-%d:\nTraceback (most recent call last):\nAttributeError: 'dict' object has no attribute 'path'\n"
    for n, at in ((1, 1.0), (2, 2.0)):
        intake.on_chunk(loop % n, at)
        intake.poll()
    intake.on_chunk(loop % 3 + b"Process ForkPoolWo", 3.0)
    assert not intake.poll().fresh_output
    intake.on_chunk(b"rker-4:\nAttributeError: 'dict' obj", 4.0)
    assert not intake.poll().fresh_output
    intake.on_chunk(b"ect has no attribute 'path'\nepoch 1:  45%|####5     | 450/1000", 5.0)
    assert intake.poll().fresh_output
    intake.on_chunk(b"\repoch 1:  46%|####6     | 460/1000", 6.0)
    assert intake.poll().fresh_output

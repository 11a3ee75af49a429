"""Weeks, not minutes: the supervisor survives its own pause, output.log rotates byte for byte, `ls DIR`
lists DIR, and a short soak shows no fd or thread leak."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SCENARIOS, bytes_differ, clean_env, py

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def _events(run_dir: Path) -> list[dict]:
    try:
        return [json.loads(ln) for ln in (run_dir / "events.jsonl").read_text().splitlines() if ln.strip()]
    except OSError:
        return []


def _wait_for(predicate, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


@pytest.mark.slow
def test_a_pause_of_the_machine_during_a_silent_batch_is_not_a_stall(run, tmp_path):
    """hangwatch and the job are both stopped for 15 s (a VM paused, a laptop asleep) while the job is in a
    long batch that is within its bound (8 s of its own time, bound 10 s). After SIGCONT hangwatch notices its
    own gap, says so, restarts its stall clocks, and the job finishes untouched. Its healthy twin is the same
    job unpaused (tests/{unit,e2e}/test_evidence_decides.py's bounds); without the pause handling it is killed at 16 s."""
    ready = tmp_path / "ready-pause"
    env = clean_env(HW_READY=str(ready))
    p = run.start(
        "--min-stall",
        "4",
        "--history-floor",
        "10",
        "--capture-window",
        "1",
        "--kill-grace",
        "2",
        "--on-hang",
        "kill",
        *py("pause_aware.py"),
        env=env,
    )
    try:
        _wait_for(ready.exists, 60, "the long batch")
        launch = next(e for e in _events(run.dir) if e["event"] == "launch")
        time.sleep(1.0)
        for pgid in (p.pid, launch["pid"]):  # hangwatch's group, then the job's (its own session)
            _signal_group(pgid, signal.SIGSTOP)
        time.sleep(15.0)
        for pgid in (launch["pid"], p.pid):
            _signal_group(pgid, signal.SIGCONT)
        assert p.wait(timeout=90) == 0, p.stderr.read().decode()[-2000:] if p.stderr else ""
    finally:
        for pgid in (p.pid,):
            _signal_group(pgid, signal.SIGCONT)
    events = _events(run.dir)
    pauses = [e for e in events if e["event"] == "pause"]
    assert len(pauses) == 1 and 13.0 <= pauses[0]["seconds"] <= 20.0, pauses
    assert not [e for e in events if e["event"] in ("incident", "action")], [e["event"] for e in events]


def test_output_log_rotates_byte_for_byte_and_the_incident_quotes_the_newest_tail(run, tmp_path):
    """5 MiB of numbered lines, then a prompt: output.log rotates every 1 MiB and keeps 9 files. Read oldest
    first, output.log.9 .. output.log.1, output.log hold exactly the job's bytes; the incident (a prompt,
    read from the newest tail) quotes the prompt line."""
    script = tmp_path / "flood_then_prompt.py"
    script.write_text(
        "import os, sys\n"
        "r, w = os.pipe()\n"
        "os.dup2(r, 0)  # a standard input nobody will write to (and never closed)\n"
        "out = sys.stdout.buffer\n"
        "for i in range(60000):\n"
        "    out.write(b'%08d ' % i + b'x' * 79 + b'\\n')\n"
        "out.write(b'Enter your API key: ')\n"
        "out.flush()\n"
        "input()\n"
    )
    p = run.start(
        "--min-stall",
        "2",
        "--capture-window",
        "1",
        "--kill-grace",
        "2",
        "--on-hang",
        "kill",
        "--log-max-size",
        "1M",
        "--log-keep",
        "9",
        "--",
        sys.executable,
        str(script),
    )
    _, err = p.communicate(timeout=120)
    assert p.returncode == 125, err.decode()[-2000:]
    files = sorted(run.dir.glob("output.log.*"), key=lambda q: -int(q.suffix[1:]))
    assert 4 <= len(files) <= 5, files  # 5 MiB in 1 MiB files (a file ends past 1 MiB: chunks are written whole)
    data = b"".join(q.read_bytes() for q in [*files, run.dir / "output.log"])
    expected = b"".join(b"%08d " % i + b"x" * 79 + b"\n" for i in range(60000)) + b"Enter your API key: "
    assert bytes_differ(data, expected) is None, bytes_differ(data, expected)
    assert all(q.stat().st_size <= (1 << 20) + (1 << 18) for q in files)
    incident = json.loads((run.dir / "incidents" / "001" / "incident.json").read_text())
    root = incident["findings"][0]
    assert root["cause"] == "process.waits_for_input" and "Enter your API key" in root["summary"], root


def test_ls_of_a_directory_lists_that_directory_only(run, tmp_path):
    """A run recorded in the per-user index but elsewhere is not listed by `ls DIR`; `--all` adds it."""
    state = tmp_path / "state"
    env = clean_env(XDG_STATE_HOME=str(state))
    other = tmp_path / "elsewhere" / "run1"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "hangwatch",
            "run",
            "--run-dir",
            str(other),
            "--",
            sys.executable,
            "-c",
            "print('step 1')",
        ],
        capture_output=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    here = tmp_path / "here"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "hangwatch",
            "run",
            "--run-dir",
            str(here / "run2"),
            "--",
            sys.executable,
            "-c",
            "print('step 1')",
        ],
        capture_output=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert r.returncode == 0, r.stderr

    def names(*args: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-m", "hangwatch", "ls", "--json", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=True,
            cwd=tmp_path,  # its ./hangwatch-runs is the test's own, not the checkout's
        ).stdout
        return sorted(Path(v["run_dir"]).name for v in json.loads(out))

    assert names(str(here)) == ["run2"]
    assert names(str(here), "--all") == ["run1", "run2"]
    assert names() == ["run1", "run2"]  # no directory: ./hangwatch-runs and the index


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_a_short_soak_leaks_no_fds_or_threads():
    """The CI form of bench/soak.py: 33 s of a healthy torch job (DataLoader workers, autobeat, a tqdm bar under a
    pipe, ~1,000 lines a second, a checkpoint every 10 s, --metrics-port, log rotation); fds and threads sampled
    every 10 s after the first 12 s."""
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "soak.py"),
            "--minutes",
            "0.55",
            "--warmup",
            "0.2",
            "--checkpoint-every",
            "10",
            "--check",
        ],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no fd or thread leak" in r.stdout


assert SCENARIOS.is_dir()


def test_a_job_that_ends_with_its_pipe_full_behind_a_slow_reader_loses_no_byte(run, tmp_path):
    """The job prints 1.5 MiB and exits at once; the reader of hangwatch's output takes 16 KiB every 0.1 s, so at the
    job's end about 1 MiB waits in its pipe and the pass-through needs some 7 s to pass it on. The drain at the end
    waits while the pumps still move bytes (a fixed 5 s gave up, closed output.log under the pump, and lost the
    rest of both copies); output.log and hangwatch's output hold every byte."""

    script = tmp_path / "burst.py"
    script.write_text(
        "import sys\n"
        "out = sys.stdout.buffer\n"
        "for i in range(18000):\n"
        "    out.write(b'%08d ' % i + b'y' * 78 + b'\\n')\n"
    )
    expected = b"".join(b"%08d " % i + b"y" * 78 + b"\n" for i in range(18000))
    p = run.start("--", sys.executable, str(script))
    assert p.stdout is not None
    got, deadline = bytearray(), time.monotonic() + 60
    while time.monotonic() < deadline:
        if not select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
            break  # nothing more within the bound: the checks below say what is missing
        chunk = os.read(p.stdout.fileno(), 16384)
        if not chunk:
            break
        got += chunk
        time.sleep(0.1)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 0, err.decode()[-2000:]
    assert bytes_differ(bytes(got), expected) is None, bytes_differ(bytes(got), expected)
    logged = (run.dir / "output.log").read_bytes()
    assert bytes_differ(logged, expected) is None, bytes_differ(logged, expected)

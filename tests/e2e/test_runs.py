"""Seeing runs: `hangwatch ls`, `hangwatch watch` (in a real terminal, tmux), the HTML page, ETA and
budget. Every run here is a real one made by `hangwatch run`.

Here the tests that start real processes; those that start none are in tests/unit/test_runs.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FAST, SCENARIOS, Run, _free_port, _job_processes, clean_env, py, wait_for_event

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


def hw(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hangwatch", *args],
        cwd=cwd,
        env=env or clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def runs(tmp_path):
    made: list[Run] = []

    def make(name: str) -> Run:
        d = tmp_path / name
        d.mkdir()
        r = Run(d)
        made.append(r)
        return r

    yield make
    left = [pid for r in made for pid in r.cleanup()]
    assert not left, f"hangwatch left job processes behind: {left}"


def _ls(tmp_path: Path, env: dict[str, str], *args: str) -> dict[str, dict]:
    r = hw("ls", "--json", *args, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    return {Path(v["run_dir"]).parent.name: v for v in json.loads(r.stdout)}


def _wait(predicate, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.e2e
def test_ls_finds_runs_through_the_index_and_tells_dead_supervisors_from_running_ones(runs, tmp_path):
    env = clean_env(XDG_STATE_HOME=str(tmp_path / "state"))
    ckpt = tmp_path / "ck.json"
    a = runs("a")  # hangs, restarted with the fallback, finishes
    r = a(
        *FAST,
        "--on-hang",
        "restart",
        "--fallback",
        "--safe",
        "--cost-per-hour",
        "3.6",
        *py("stepper.py", "--steps", "12", "--interval", "0.1", "--hang-at", "6", "--ckpt", str(ckpt)),
        env=env,
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    b = runs("b")  # crashes
    assert b(*FAST, *py("stepper.py", "--crash-at", "3", "--interval", "0.05"), env=env).returncode == 1
    c = runs("c")  # runs on
    p = c.start("--min-stall", "30", "--cost-per-hour", "3.6", *py("stepper.py", "--steps", "1000"), env=env)
    wait_for_event(c, "progress")
    seen = _wait(
        lambda: (v := _ls(tmp_path / "a", env, "--all").get("c")) and v.get("step") and v, what="c's first step"
    )
    assert seen["state"] == "running" and seen["total_steps"] == 1000
    assert list(_ls(tmp_path, env, str(tmp_path / "a"))) == ["a"]  # a directory given: its runs, nothing else
    found = _ls(tmp_path / "a", env, "--all")  # started elsewhere, listed from here with --all: the per-user index
    assert (found["a"]["state"], found["a"]["attempts"], found["a"]["incidents"], found["a"]["step"]) == (
        "finished",
        2,
        1,
        12,
    )
    assert found["a"]["latest_incident"]["cause"] == "code.deadlock"
    assert found["b"]["state"] == "crashed" and found["b"]["exit_code"] == 1
    assert found["c"]["eta_seconds"] > 0 and found["c"]["projected_cost_usd"] > 0
    only_here = _ls(tmp_path, env, "--here", str(tmp_path / "b"))
    assert list(only_here) == ["b"]

    os.kill(p.pid, signal.SIGKILL)  # hangwatch dies without writing an end
    p.wait(timeout=10)
    after = _ls(tmp_path, env)
    assert after["c"]["state"] == "dead" and "died without writing an end" in after["c"]["detail"]
    table = hw("ls", cwd=tmp_path, env=env).stdout
    assert re.search(r"\brun\b.*dead \(hangwatch gone\)", table) and "finished" in table and "crashed" in table
    # The job does not outlive hangwatch: the guardian ends it (looked at, not killed here: the fixture's
    # cleanup would kill leftovers and hide a guardian that did nothing).
    _wait(lambda: not _job_processes(c.dir), what="the guardian to end c's job")


@pytest.mark.e2e
def test_ls_of_a_missing_directory_is_one_line_and_exit_2(tmp_path):
    r = hw("ls", str(tmp_path / "nope"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "does not exist" in r.stderr
    assert hw("ls", "--json", cwd=tmp_path, env=clean_env(XDG_STATE_HOME=str(tmp_path))).stdout.strip() == "[]"


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("quit_key", ["q", "C-c"])
def test_watch_in_a_real_terminal_shows_the_run_and_quits_on_a_key(run, tmp_path, quit_key):
    run.start("--min-stall", "30", "--cost-per-hour", "2", *py("stepper.py", "--steps", "1000", "--interval", "0.1"))
    wait_for_event(run, "progress")
    sock = f"hw-test-{os.getpid()}-{quit_key}"
    tmux = ["tmux", "-L", sock]
    env = clean_env(TERM="xterm-256color")
    watch = f"{sys.executable} -m hangwatch watch --interval 0.3 {run.dir}; echo WATCH-EXITED $?; sleep 30"
    subprocess.run([*tmux, "new-session", "-d", "-x", "120", "-y", "40", watch], env=env, check=True, timeout=10)
    try:

        def screen() -> str:
            return subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True, text=True, timeout=10).stdout

        shown = _wait(
            lambda: (s := screen()) and re.search(r"step\s+\d+ / 1000", s) and "steps/s" in s and s,
            what="the live view",
        )
        assert "RUNNING" in shown and "ETA" in shown and "to finish" in shown and "launch" in shown
        first = int(re.search(r"step\s+(\d+) / 1000", shown).group(1))  # type: ignore[union-attr]
        _wait(
            lambda: int(re.search(r"step\s+(\d+) / 1000", screen()).group(1)) > first,  # type: ignore[union-attr]
            what="the view to refresh",
        )
        _wait(lambda: re.search(r"step rate\s+[▁▂▃▄▅▆▇█]+", screen()), what="the sparkline")
        subprocess.run([*tmux, "send-keys", quit_key], check=True, timeout=10)
        out = _wait(lambda: "WATCH-EXITED" in (s := screen()) and s, timeout=15, what="watch to exit")
        assert "WATCH-EXITED 0" in out and "Traceback" not in out
        assert run.proc is not None and run.proc.poll() is None  # read-only: the run goes on
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=10)


@pytest.mark.e2e
def test_html_page_of_a_hang_restarted_into_a_slower_fallback(run, tmp_path):
    ckpt = tmp_path / "ck.json"
    r = run(
        *FAST,
        "--on-hang",
        "restart",
        "--fallback",
        "--safe --slow",
        "--cost-per-hour",
        "36",
        *py("stepper.py", "--steps", "24", "--interval", "0.12", "--hang-at", "8", "--ckpt", str(ckpt)),
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    page = run.dir / "report.html"
    assert f"page: {page}" in r.stderr.decode()  # the banner names the page
    out = tmp_path / "out" / "run.html"
    done = hw("report", str(run.dir), "--html", str(out), cwd=tmp_path)
    assert done.returncode == 0 and str(out) in done.stdout, done.stderr
    html = out.read_text()
    assert len(html.encode()) < 1 << 20
    assert "<script" not in html and "<link" not in html and "src=" not in html  # nothing fetched
    assert re.findall(r"https?://[^\"' ]+", html) == ["http://www.w3.org/2000/svg"]
    assert html.count("<polyline") == 2 and "restart (attempt 2)" in html
    assert 'href="#incident-1"' in html and 'id="incident-1"' in html and "code.deadlock" in html
    assert "stepper.py:" in html and "threading.Event().wait()" in html  # where, and the source line
    ratio = re.search(r"(\d\.\d\d)x the rate of attempt 1, ETA \+([\d.]+ \w+), \+\$([\d.]+)", html)
    assert ratio, re.findall(r"the rate of attempt 1[^<]*", html)
    assert 0.3 < float(ratio.group(1)) < 0.75  # --slow halves the step rate
    assert (
        "<code>--safe --slow</code>" in html
        and "Process tree" in html
        and "wasted while stalled or redoing steps" in html
    )


@pytest.mark.e2e
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (apt install chromium) to render the page")
def test_html_page_renders_in_headless_chromium(run, tmp_path):
    r = run(*FAST, "--on-hang", "kill", *py("stepper.py", "--steps", "30", "--interval", "0.1", "--hang-at", "12"))
    assert r.returncode == 125
    page = run.dir / "report.html"
    shot = tmp_path / "page.png"
    base = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run([*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=90)
    assert "Incident 1" in dom.stdout and "<svg" in dom.stdout, dom.stderr[-2000:]
    subprocess.run(
        [*base, f"--screenshot={shot}", "--window-size=1000,1400", page.as_uri()], capture_output=True, timeout=90
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


@pytest.mark.e2e
def test_a_day_of_progress_stays_a_small_page(run, tmp_path):
    r = run(*FAST, "--on-hang", "kill", *py("stepper.py", "--steps", "30", "--interval", "0.05", "--hang-at", "5"))
    assert r.returncode == 125
    events = (run.dir / "events.jsonl").read_text().splitlines()
    t0 = json.loads(events[0])["at"] - 86400
    day = [
        json.dumps({"at": t0 + 10 * i, "event": "progress", "attempt": 1, "step": 3 * i, "source": "log:step"})
        for i in range(8640)
    ]
    day += [json.dumps({"at": t0 + 20 * i, "event": "extended", "attempt": 1, "reason": "slow"}) for i in range(4000)]
    (run.dir / "events.jsonl").write_text("\n".join(sorted(day, key=lambda s: json.loads(s)["at"]) + events) + "\n")
    out = tmp_path / "day.html"
    assert hw("report", str(run.dir), "--html", str(out), cwd=tmp_path).returncode == 0
    html = out.read_text()
    assert len(html.encode()) < 1 << 20, len(html)
    points = re.search(r'<polyline points="([^"]+)"', html).group(1).split()  # type: ignore[union-attr]
    assert len(points) <= 600 and "earlier events left out" in html


@pytest.mark.e2e
def test_merged_rank_stacks_of_a_torchrun_hang(run):
    r = run(
        *FAST,
        "--startup-grace",
        "60",
        "--on-hang",
        "kill",
        "--",
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port",
        str(_free_port()),
        str(SCENARIOS / "dist_peer.py"),
    )
    assert r.returncode == 125, r.stderr.decode()[-2000:]
    html = (run.dir / "report.html").read_text()
    where = re.search(r"Ranks \(2\): where each one is</h4><p><code>([^<]+)</code>", html)
    assert where, "no merged rank view"
    text = where.group(1)
    assert re.search(r"rank 0 in \S+ \(", text) and re.search(r"rank 1 in \S+ \(", text) and " | " in text
    assert "dist_peer.py" in html and "Merged stacks" in html


@pytest.mark.e2e
def test_budget_warns_once_with_the_numbers(run):
    r = run(
        "--min-stall",
        "5",
        "--cost-per-hour",
        "3600",
        "--budget",
        "1",
        *py("stepper.py", "--steps", "25", "--interval", "0.1"),
    )
    assert r.returncode == 0
    err = r.stderr.decode()
    assert re.search(r"over budget: projected \$[\d.]+ > budget \$1\.00: short by \$[\d.]+ at the current rate", err)
    assert [e["event"] for e in run.events()].count("over_budget") == 1
    s = run.summary()
    assert s["budget_usd"] == 1.0 and s["state"] == "finished"


@pytest.mark.e2e
def test_budget_stop_needs_a_total_it_can_trust(run):
    # The total is the N of a bar in the log: it may be some other loop's, so hangwatch warns but never stops.
    r = run(
        "--min-stall",
        "1",
        "--cost-per-hour",
        "3600",
        "--budget",
        "1",
        "--on-over-budget",
        "stop",
        *py("stepper.py", "--steps", "40", "--interval", "0.1"),
        timeout=60,
    )
    assert r.returncode == 0 and b"is not stopped" in r.stderr and b"Pass --total-steps" in r.stderr
    assert run.summary()["state"] == "finished"


@pytest.mark.e2e
def test_budget_stop_ends_the_job_cleanly(run):
    r = run(
        "--min-stall",
        "1",
        "--kill-grace",
        "2",
        "--cost-per-hour",
        "3600",
        "--budget",
        "1",
        "--on-over-budget",
        "stop",
        "--total-steps",
        "1000",
        *py("stepper.py", "--steps", "1000", "--interval", "0.1"),
        timeout=60,
    )
    assert r.returncode == 122, r.stderr.decode()[-2000:]  # the exit-code contract: stopped over budget
    s = run.summary()
    assert s["state"] == "stopped" and 1 < s["last_step"] < 200
    assert (s["exit_reason"], s["requeue"]) == ("over_budget", False) and "projected $" in s["exit_why"]
    reasons = [e.get("reason") for e in run.events() if e["event"] == "terminate"]
    assert reasons == ["over budget (--on-over-budget stop)"]
    assert b"ending the job (--on-over-budget stop)" in r.stderr


@pytest.mark.e2e
def test_total_steps_gives_an_eta_and_budget_flags_are_checked(run, tmp_path):
    r = run("--min-stall", "5", "--total-steps", "500", *py("stepper.py", "--steps", "15", "--interval", "0.1"))
    assert r.returncode == 0
    s = run.summary()
    assert s["total_steps"] == 500 and s["eta_seconds"] > 10
    for bad in (
        ["--budget", "5"],
        ["--cost-per-hour", "1", "--budget", "5", "--on-over-budget", "later"],
        ["--total-steps", "0"],
    ):
        e = hw("run", *bad, "--", "true", cwd=tmp_path)
        assert e.returncode == 2 and e.stderr.count("\n") == 1 and "Traceback" not in e.stderr, e.stderr


@pytest.mark.e2e
def test_budget_stop_lands_right_after_a_checkpoint(run, tmp_path):
    """autobeat sees torch.save as a checkpoint phase: once over budget, the job is ended only after
    the next checkpoint has been written, not in the middle of one, nor steps later."""
    r = run(
        "--min-stall",
        "2",
        "--startup-grace",
        "60",
        "--kill-grace",
        "5",
        "--cost-per-hour",
        "3600",
        "--budget",
        "2",
        "--on-over-budget",
        "stop",
        "--total-steps",
        "1000",
        *py("ckpt_job.py", "--every", "20", "--save-s", "1.5", "--out", str(tmp_path / "ckpt.pt")),
        timeout=120,
    )
    assert r.returncode != 0, r.stderr.decode()[-2000:]
    events = run.events()
    over = next(e for e in events if e["event"] == "over_budget")
    term = next(e for e in events if e["event"] == "terminate")
    assert term["reason"] == "over budget (--on-over-budget stop)" and term["at"] > over["at"]
    assert b"ending the job after its checkpoint" in r.stderr
    lines = [ln for ln in r.stdout.decode().splitlines() if ln.strip()]
    saved = [i for i, ln in enumerate(lines) if ln.startswith("saved checkpoint")]
    assert saved and "saving" not in lines[-1], lines[-5:]  # never stopped in the middle of a save
    # ...and soon after the last one ended: within a few of the loop's rounds (0.5 s each, a step is 0.05 s and
    # more; 9 steps under a loaded suite), well before the next checkpoint (20 steps on)
    assert len(lines) - 1 - saved[-1] <= 15, lines[saved[-1] :]
    assert run.summary()["state"] == "stopped"

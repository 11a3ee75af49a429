"""A look when nothing in the job can move ([4/5]): the kernel's view of the whole job (every process waiting,
no CPU, no bytes) calls for a look at once, whatever the progress clock says, before the first step too; the look
decides as always, on proof only. With the defaults (--min-stall 120 s), both ways on real processes."""

from __future__ import annotations

import pytest
from conftest import Run, marker, py, root_cause


def _looks(run: Run) -> list[dict]:
    return [e for e in run.events() if e["event"] in ("probe", "look") and e.get("trigger") == "still"]


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["start", "after"])
def test_a_job_that_never_prints_and_hangs_is_named_within_seconds_before_and_after_its_first_step(run, mode):
    """Hung with proof (every thread parked on a primitive of its own), named at its line ≤ 20 s after launch with
    the defaults: before, the first look came 15 s into a stall, and a job with no progress signal waited for it."""
    r = run("--on-hang", "kill", "--kill-grace", "2", *py("still_job.py", mode), timeout=60)
    assert r.returncode == 125, r.stderr.decode()[-3000:]
    incident = run.hang()
    root = root_cause(incident)
    assert root["cause"] == "code.deadlock" and root["proof"]["kind"] == "hang", root
    assert (root["where"]["file"], root["where"]["line"]) == marker("still_job.py", "HANG-HERE"), root["where"]
    looks = _looks(run)
    assert looks and looks[-1]["hung"] is True, run.events()
    launched = next(e["at"] for e in run.events() if e["event"] == "launch")
    declared = next(e["at"] for e in run.events() if e["event"] == "incident")
    assert declared - launched <= 20.0, (declared - launched, run.events())


@pytest.mark.e2e
@pytest.mark.parametrize(("mode", "seconds"), [("compute", "15"), ("download", "15"), ("sleep", "12")])
def test_a_silent_job_that_computes_downloads_or_sleeps_is_left_alone(run, mode, seconds):
    """The twins: silent the whole time, no progress signal. Computing or reading bytes, the job is never still (no
    look is called for); asleep, it is still, is looked at, and the look finds no proof: nothing is done."""
    r = run("--on-hang", "kill", "--kill-grace", "2", *py("still_job.py", mode, seconds), timeout=60)
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    assert b"done" in r.stdout
    assert run.summary()["incidents"] == 0
    looks = _looks(run)
    if mode == "sleep":
        assert looks and not any(e["hung"] for e in looks), looks
    else:
        assert not looks, looks

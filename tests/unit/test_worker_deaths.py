"""A crash named from what the main process's DataLoader saw of its workers (the startup hook's
heartbeat/worker-deaths.jsonl): the record of the error the job died of, never an earlier one it lived on after."""

from __future__ import annotations

from hangwatch.diagnose.crash import diagnose_crash

LOST = "Traceback (most recent call last):\nlost sys.stderr\n"  # the job's own text said nothing


def _death(at: float, unhandled: bool = False) -> dict[str, object]:
    return {"pid": 10, "workers": [[11, -9]], "error": "ConnectionResetError", "at": at, "unhandled": unhandled}


def test_the_error_the_job_died_of_names_the_dead_worker():
    [f] = diagnose_crash(1, LOST, pid=10, worker_deaths=(_death(1000.0, unhandled=True),), ended_at=5000.0)
    assert f.cause == "dataloader.worker_died" and "pid 11) was killed by SIGKILL" in f.summary, f.summary
    assert "ConnectionResetError" in f.summary and any("recorded by the startup hook" in e for e in f.evidence)


def test_an_iterator_error_just_before_the_exit_names_it():
    [f] = diagnose_crash(1, LOST, pid=10, worker_deaths=(_death(995.0),), ended_at=1000.0)
    assert f.cause == "dataloader.worker_died"


def test_an_earlier_error_the_job_lived_on_after_is_no_cause():
    [f] = diagnose_crash(1, LOST, pid=10, worker_deaths=(_death(100.0),), ended_at=1000.0)
    assert f.cause == "unknown", f

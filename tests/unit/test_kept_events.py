"""The run's page is drawn from what the run keeps in memory: a bounded set of progress events, whatever the run's length."""

from __future__ import annotations

from hangwatch.records.run import EventKind
from hangwatch.supervise.books import rundir as rd


def test_a_run_of_days_keeps_a_bounded_set_of_progress_events_spanning_all_of_it_and_every_other_event(tmp_path):
    d = rd.RunDir(tmp_path / "run")
    try:
        d.event(EventKind.START, command=["python", "train.py"])
        n = 10 * rd.KEPT_PROGRESS
        for step in range(n):  # a progress event a round, for days
            d.event(EventKind.PROGRESS, step=step, attempt=1)
            if step == n // 2:
                d.event(EventKind.EXTENDED, why="a look in the middle")
        events = d.run_record().events
    finally:
        d.close()
    steps = [e.fields["step"] for e in events if e.kind == EventKind.PROGRESS]
    assert len(steps) <= rd.KEPT_PROGRESS  # bounded: kept whole, they grew by one a round
    assert steps[0] == 0 and steps[-1] == n - 1 and steps == sorted(steps)  # all of it, and the newest
    quarters = [sum(1 for x in steps if q * n // 4 <= x < (q + 1) * n // 4) for q in range(4)]
    assert max(quarters) - min(quarters) <= 2, quarters  # spread evenly over the whole run
    assert [e.kind for e in events if e.kind != EventKind.PROGRESS] == [EventKind.START, EventKind.EXTENDED]
    middle = next(i for i, e in enumerate(events) if e.kind == EventKind.EXTENDED)
    assert events[middle - 1].fields["step"] <= n // 2 < events[middle + 1].fields["step"]  # in time order
    assert len((tmp_path / "run" / "events.jsonl").read_text().splitlines()) == n + 2  # the file keeps every one

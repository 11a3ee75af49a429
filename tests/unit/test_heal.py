"""Heal in place, the parts with no process: what hangwatch asks for (or why it restarts instead), how it reads the
job's answers, and the hook's leaving out of a skipped sample. Real DataLoaders, real trainers: tests/e2e/test_heal.py."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from hangwatch.causes import Cause
from hangwatch.diagnose import diagnose
from hangwatch.evidence_io import evidence_from_dict
from hangwatch.records.evidence import LoaderTask, LocalsRead
from hangwatch.recover import heal

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "evidence"


def _stuck(tmp_path, hook, iterable=False, batch=5, with_locals=True, healable=True):
    """A recorded stuck worker (the fixture's), its batch in a real record file beside it, and its root finding."""
    ev = evidence_from_dict(json.loads((FIXTURES / "dataloader_worker_stuck-dl_worker_blocked.json").read_text()))
    root = diagnose(ev).root
    assert root.cause == Cause.DATALOADER_WORKER_STUCK and root.where is not None
    pid = root.where.pid
    task = LoaderTask(pid, 1, batch, 4, (20, 21, 22, 23), 0.0, 0.0, iterable, "Shards", healable=healable)
    reads = (LocalsRead(0.0, 0, "__getitem__", "/x/train.py", 9, (("index", "21"), ("path", "'/mnt/s-21'"))),)
    procs = tuple(
        dataclasses.replace(p, loader_task=task, locals=reads if with_locals else ()) if p.info.pid == pid else p
        for p in ev.processes
    )
    it = SimpleNamespace(
        _num_workers=2,
        _dataset_kind=1 if iterable else 0,
        _dataset=object(),
        _workers=[SimpleNamespace(pid=pid - 1), SimpleNamespace(pid=pid)],
    )
    t = hook._LoaderTasks(str(tmp_path), it)
    t.sent(batch, [20, 21, 22, 23], 1)
    t.flush()  # the main process waits for that batch: it has written its record
    return dataclasses.replace(ev, processes=procs), root, t


def test_a_stuck_workers_heal_names_its_worker_batch_and_sample_and_is_written_whole(tmp_path, hook):
    ev, root, t = _stuck(tmp_path, hook)
    ask = heal.plan(root, ev, tmp_path, seq=1, left=3, allowed=3)
    assert isinstance(ask, heal.HealAsk), ask
    assert (ask.worker, ask.pid, ask.batch, ask.sample) == (1, root.where.pid, 5, 21)
    assert ask.sample_text == "index 21, path='/mnt/s-21' in __getitem__ (train.py:9)"
    assert ask.record == Path(t.path)
    ask.write()
    written = json.loads(ask.request_path.read_text())
    assert abs(written.pop("asked_at") - time.time()) < 60 and written.pop("good_for") == heal.ANSWER_S
    assert written == {
        "seq": 1,
        "worker": 1,
        "pid": root.where.pid,
        "batch": 5,
        "sample": 21,
        "why": "stuck",
    }
    assert ask.request_path.name == Path(t.path).name.replace(".dl", ".heal")


def test_no_sample_among_the_locals_asks_with_none(tmp_path, hook):
    ev, root, _ = _stuck(tmp_path, hook, with_locals=False)
    ask = heal.plan(root, ev, tmp_path, seq=1, left=3, allowed=3)
    assert isinstance(ask, heal.HealAsk) and ask.sample is None and ask.sample_text is None


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"left": 0}, "the 3 heal(s) allowed (--max-heals) are used up"),
        ({"iterable": True}, "its dataset is an IterableDataset"),
        ({"batch": -1}, "the worker holds no batch"),
        ({"cause": Cause.CODE_DEADLOCK}, "it is not a DataLoader worker's hang (code.deadlock)"),
        ({"no_record": True}, "its DataLoader's record is gone"),
        ({"no_task": True}, "its DataLoader's batches were not recorded"),
        ({"healable": False}, "heal is off for its DataLoader (in_order=False"),
    ],
)
def test_where_heal_cannot_apply_it_says_why_in_one_sentence(tmp_path, hook, change, why):
    ev, root, t = _stuck(
        tmp_path,
        hook,
        iterable=change.get("iterable", False),
        batch=change.get("batch", 5),
        healable=change.get("healable", True),
    )
    if "cause" in change:
        root = dataclasses.replace(root, cause=change["cause"])
    if change.get("no_record"):
        t.close()
    if change.get("no_task"):
        ev = dataclasses.replace(ev, processes=tuple(dataclasses.replace(p, loader_task=None) for p in ev.processes))
    got = heal.plan(root, ev, tmp_path, seq=1, left=change.get("left", 3), allowed=3)
    assert isinstance(got, str) and got.startswith(why), got


def test_answers_are_read_once_each_and_a_line_not_yet_whole_waits(tmp_path):
    answers = heal.HealAnswers(tmp_path)
    path = tmp_path / "100-1.heals"
    assert answers.new() == []
    path.write_text('{"seq": 1, "ok": true}\n{"seq": 2,')
    assert answers.new() == [{"seq": 1, "ok": True}]
    with open(path, "a") as f:
        f.write(' "ok": false}\nnot json\n')
    assert answers.new() == [{"seq": 2, "ok": False}]
    assert answers.new() == []
    path.write_text('{"seq": 4, "ok": true}\n')  # the same file, written again from the start
    assert answers.new() == [{"seq": 4, "ok": True}]


def test_the_line_a_user_reads_says_what_was_done():
    base = {"worker": 1, "old_pid": 10, "pid": 11, "batch": 5, "why": "stuck", "dataset": "Shards"}
    assert heal.said({**base, "action": "retried"}) == (
        "DataLoader worker 1 (pid 10, stuck) was replaced inside the job by pid 11; batch 5 and the ones after it "
        "were handed to it again"
    )
    skipped = heal.said({**base, "action": "skipped", "skipped": [21]}, "index 21 in Shards.__getitem__ (t.py:9)")
    assert skipped.endswith(
        "batch 5 hung again, and was handed to it without sample 21 (index 21 in Shards.__getitem__ (t.py:9)), "
        "which is left out of Shards from now on"
    )
    assert heal.said({**base, "action": "dropped", "skipped": [20, 21]}).endswith(
        "batch 5 hung again and was dropped (samples 20, 21)"
    )


def test_the_hook_takes_a_skipped_sample_out_of_each_batch_before_torch_numbers_it(hook, tmp_path):
    """A batch loses the sample; a batch of nothing but skipped samples is not sent at all; indices that are not
    numbers pass as they are."""
    given = iter([[20, 21, 22], [21], 21, [23], 7, [{"k": 1}]])

    class Iter:
        def _next_index(self):
            return next(given)

    hook._attach_skip(SimpleNamespace(_MultiProcessingDataLoaderIter=Iter))
    it = Iter()
    t = hook._LoaderTasks(str(tmp_path), SimpleNamespace(_num_workers=1, _dataset_kind=0, _workers=[]))
    it._hangwatch_tasks = t
    t.skip.add(21)
    assert [it._next_index() for _ in range(4)] == [[20, 22], [23], 7, [{"k": 1}]]
    t.close()


def test_a_datasets_key_is_its_class_and_length(hook):
    class Shards:
        def __len__(self):
            return 256

    class NoLen:
        def __len__(self):
            raise TypeError("no len")

    assert hook._dataset_key(Shards()).endswith("Shards:256")
    assert hook._dataset_key(NoLen()).endswith("NoLen")


class _FakeIter:
    """The part of torch's multiprocessing iterator a heal reads and writes: worker 1 holds batches 5 and 7."""

    def __init__(self, batch5):
        self._num_workers, self._dataset_kind, self._dataset = 2, 0, object()
        self._workers = [SimpleNamespace(pid=100), SimpleNamespace(pid=101)]
        self._worker_result_queue = SimpleNamespace()
        self._task_info = {4: (0,), 5: (1,), 7: (1,)}
        self._tasks_outstanding, self._workers_num_tasks = 3, [1, 2]
        self.refills, self.batch5 = 0, batch5

    def _try_put_index(self):
        self.refills += 1


@pytest.fixture
def healing(hook, tmp_path, monkeypatch):
    """A healer of a fake iterator; workers are 'replaced' by new pids, what a fresh one is handed is kept."""
    monkeypatch.setenv("HANGWATCH_HEAL", "3")
    monkeypatch.setattr(hook._Healer, "left", 3)
    handed = []

    def start(it, t, w):
        it._workers[w] = SimpleNamespace(pid=it._workers[w].pid + 10)
        handed.append([])
        return SimpleNamespace(put=handed[-1].append)

    monkeypatch.setattr(hook._Healer, "_end", staticmethod(lambda p: None))
    monkeypatch.setattr(hook._Healer, "_start", staticmethod(start))

    def make(batch5):
        it = _FakeIter(batch5)
        t = hook._LoaderTasks(str(tmp_path), it)
        for b, ix, w in ((4, [16, 17, 18, 19], 0), (5, batch5, 1), (7, [28, 29, 30, 31], 1)):
            t.sent(b, ix, w)
        return it, t, hook._Healer(t)

    return make, handed


def test_a_heal_hands_the_same_batches_then_without_the_sample_and_the_iterators_counts_stay_whole(hook, healing):
    make, handed = healing
    it, t, h = make([20, 21, 22, 23])
    first = h.heal(it, t, 1, 21, "stuck")
    assert (first["action"], first["batch"], first["old_pid"], first["pid"]) == ("retried", 5, 101, 111)
    assert handed[-1] == [(5, [20, 21, 22, 23]), (7, [28, 29, 30, 31])]
    second = h.heal(it, t, 1, 21, "stuck")
    assert (second["action"], second["skipped"]) == ("skipped", [21])
    assert handed[-1] == [(5, [20, 22, 23]), (7, [28, 29, 30, 31])] and t.skip == {21}
    assert (it._task_info, it._tasks_outstanding, it._workers_num_tasks, it.refills) == (
        {4: (0,), 5: (1,), 7: (1,)},
        3,
        [1, 2],
        0,
    )
    assert [(b, ix) for b, ix, _ in t.queues[1]] == [(5, [20, 22, 23]), (7, [28, 29, 30, 31])]
    with pytest.raises(hook._NotHealed, match="--max-heals"):  # 3 allowed: 2 taken here, the third by another rank
        hook._take_heal(str(Path(t.path).parent))
        h.heal(it, t, 1, 21, "stuck")
    t.close()


def test_a_batch_with_nothing_left_is_dropped_and_torchs_counts_follow(hook, healing):
    make, handed = healing
    it, t, h = make([21])
    h.heal(it, t, 1, 21, "stuck")
    dropped = h.heal(it, t, 1, 21, "stuck")
    assert (dropped["action"], dropped["skipped"]) == ("dropped", [21])
    assert handed[-1] == [(7, [28, 29, 30, 31])]
    assert (it._task_info, it._tasks_outstanding, it._workers_num_tasks, it.refills) == (
        {4: (0,), 7: (1,)},
        2,
        [1, 1],
        1,
    )
    t.close()

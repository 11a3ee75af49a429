"""The batches DataLoader workers hold: the autobeat hook's writer (``_LoaderTasks``) and capture's reader
(capture/loader.py) on one file, with no process; the words a finding uses. Real DataLoaders: tests/e2e/test_samples.py."""

from __future__ import annotations

import os
import struct
from types import SimpleNamespace

import pytest

from hangwatch.capture import loader
from hangwatch.records import layout
from hangwatch.records.evidence import LoaderTask


def _iterator(workers: int = 2, iterable: bool = False) -> SimpleNamespace:
    class Shards:
        pass

    return SimpleNamespace(
        _num_workers=workers,
        _dataset_kind=1 if iterable else 0,
        _dataset=Shards(),
        _workers=[SimpleNamespace(pid=1000 + w) for w in range(workers)],
    )


def _read(tmp_path, *tasks) -> dict[int, LoaderTask]:
    """What a look reads while the main process waits for a batch: it has written the record (``flush``)."""
    for t in tasks:
        t.flush()
    return loader.loader_tasks(str(tmp_path), os.getpid())


def test_the_hook_and_the_reader_agree_on_the_file(hook):
    assert (hook.LOADER_MAGIC, hook.LOADER_INDICES, hook.LOADER_SUFFIX) == (
        loader.MAGIC,
        loader.INDICES,
        layout.LOADER_SUFFIX,
    )
    assert (hook.LOADER_HEADER.format, hook.LOADER_SLOT.format) == (loader.HEADER.format, loader.SLOT.format)


def test_each_worker_holds_its_oldest_batch_not_yet_back(hook, tmp_path):
    t = hook._LoaderTasks(str(tmp_path), _iterator())
    for batch in range(4):  # prefetch: two batches each, round robin
        t.sent(batch, list(range(8 * batch, 8 * batch + 8)), batch % 2)
    got = _read(tmp_path, t)
    assert {pid: (x.worker_id, x.batch, x.indices[:2], x.count) for pid, x in got.items()} == {
        1000: (0, 0, (0, 1), 8),
        1001: (1, 1, (8, 9), 8),
    }
    t.received(0, 0)  # worker 0 returned batch 0: it is on batch 2 now, since then
    w0 = _read(tmp_path, t)[1000]
    assert (w0.batch, w0.indices[0], w0.dataset, w0.iterable) == (2, 16, "Shards", False)
    assert w0.since >= w0.sent
    t.received(2, 0)
    assert _read(tmp_path, t)[1000].batch == -1  # nothing outstanding
    t.close()
    assert loader.loader_tasks(str(tmp_path), os.getpid()) == {}


def test_the_record_is_read_only_as_its_main_process_last_wrote_it_while_it_waited(hook, tmp_path):
    """The main process writes the record when it waits for a batch (heal's poll), not at every batch: the header
    says the slots are current until a batch moves. A look between two batches reads nothing from it (the locals
    say what a worker holds), never an earlier batch as if it were held now."""
    t = hook._LoaderTasks(str(tmp_path), _iterator(1))
    t.sent(0, [1, 2], 0)
    assert loader.loader_tasks(str(tmp_path), os.getpid()) == {}  # never written while it waited
    t.flush()
    assert loader.loader_tasks(str(tmp_path), os.getpid())[1000].batch == 0
    t.sent(1, [3, 4], 0)
    t.received(0, 0)  # worker 0 moved on to batch 1: the file still says 0, and says it is not current
    assert loader.loader_tasks(str(tmp_path), os.getpid()) == {}
    t.set_flags(t.flags | hook.LOADER_HEALABLE)
    assert _read(tmp_path, t)[1000].batch == 1 and _read(tmp_path, t)[1000].healable
    t.close()


def test_with_heal_off_nothing_is_recorded_a_batch_and_the_main_process_records_what_it_sends_where_heal_is_on(
    hook, tmp_path, monkeypatch
):
    """Heal off (and no sample an earlier heal left out): torch's iterator is not wrapped at all, no file is made, and
    nothing is written a batch (bench/samples.py): a look reads a stuck worker's batch from its locals. Heal on: the
    main process records each batch it sends on an index queue."""
    import queue

    torch = pytest.importorskip("torch")
    from torch.utils.data import dataloader

    mp = dataloader._MultiProcessingDataLoaderIter
    before = (mp._reset, mp._get_data, mp._shutdown_workers)
    monkeypatch.delenv("HANGWATCH_HEAL", raising=False)
    monkeypatch.delenv("HANGWATCH_HEAL_SKIP", raising=False)
    hook._attach_loader_tasks(SimpleNamespace(directory=str(tmp_path)), dataloader)
    assert (mp._reset, mp._get_data, mp._shutdown_workers) == before, torch.__version__
    it = _iterator(2)
    it._index_queues = [queue.Queue(), queue.Queue()]
    t = hook._start_tasks(SimpleNamespace(directory=str(tmp_path)), it)
    assert all("put" in q.__dict__ for q in it._index_queues)
    it._index_queues[1].put((4, [32, 33, 34]))
    x = _read(tmp_path, t)[1001]
    assert (x.worker_id, x.batch, x.indices, x.count, x.from_locals) == (1, 4, (32, 33, 34), 3, False)
    t.close()


def test_a_slot_no_one_wrote_since_the_file_was_made_is_not_a_record(hook, tmp_path):
    """A worker that never took a batch (still importing, hung in worker_init_fn) holds what nobody wrote: not
    "it returned every batch it was sent"."""
    it = _iterator(2)
    t = hook._LoaderTasks(str(tmp_path), it)
    assert _read(tmp_path, t) == {}
    t2 = hook._LoaderTasks(str(tmp_path), _iterator(1))
    t2.sent(0, [3], 0)
    assert [x.batch for x in _read(tmp_path, t, t2).values()] == [0]
    t.close()
    t2.close()


def test_a_new_epoch_keeps_the_last_ones_batches_until_torch_has_them_back(hook, tmp_path):
    """Persistent workers: torch's reset first waits for the batches left from an epoch the loop left early; they
    stay recorded while it waits (a worker stuck on one is named with it), then go; the new epoch's stay."""
    t = hook._LoaderTasks(str(tmp_path), _iterator(1))
    t.sent(7, [70, 71], 0)
    t.begin_reset()
    t.sent(0, [0, 1], 0)  # the new epoch's first batch, sent while torch waits
    assert _read(tmp_path, t)[1000].batch == 7
    t.end_reset()
    assert _read(tmp_path, t)[1000].indices == (0, 1)
    t.received(0, 0)
    assert _read(tmp_path, t)[1000].batch == -1


def test_an_exhausted_iterable_worker_holds_nothing(hook, tmp_path):
    t = hook._LoaderTasks(str(tmp_path), _iterator(1, iterable=True))
    t.sent(3, None, 0)
    t.sent(5, None, 0)
    t.done(0)  # its dataset ran out: torch never answers what it was sent after that
    x = _read(tmp_path, t)[1000]
    assert (x.batch, x.iterable) == (-1, True)


def test_indices_that_are_a_tensor_or_a_range_are_counted(hook, tmp_path):
    import torch

    t = hook._LoaderTasks(str(tmp_path), _iterator(1))
    t.sent(0, torch.tensor([5, 6, 7]), 0)
    assert _read(tmp_path, t)[1000].indices == (5, 6, 7)
    t.sent(1, range(10, 14), 0)
    t.received(0, 0)
    x = _read(tmp_path, t)[1000]
    assert (x.count, x.indices) == (4, (10, 11, 12, 13))


def test_indices_that_are_not_numbers_keep_only_their_count(hook, tmp_path):
    t = hook._LoaderTasks(str(tmp_path), _iterator(1))
    t.sent(0, ["key-a", "key-b", "key-c"], 0)
    x = _read(tmp_path, t)[1000]
    assert (x.count, x.indices) == (3, ())
    t.sent(1, list(range(500)), 0)  # a huge batch: its first 64 indices, and its count
    t.received(0, 0)
    x = _read(tmp_path, t)[1000]
    assert (x.count, len(x.indices), x.indices[-1]) == (500, 64, 63)


def test_a_slot_caught_mid_write_is_left_out_alone(hook, tmp_path):
    t = hook._LoaderTasks(str(tmp_path), _iterator(2))
    t.sent(0, [1, 2], 0)
    t.sent(1, [3, 4], 1)
    t.flush()
    path = layout.loader_files(tmp_path, os.getpid())[0]
    struct.pack_into("<Q", t.mm, loader.HEADER.size, 7)  # odd: the writer is in the middle of worker 0's slot
    t.mm.flush()
    assert [(x.worker_id, x.indices) for x in loader.read_loader_file(path)] == [(1, (3, 4))]
    path.write_bytes(b"garbage")
    assert loader.read_loader_file(path) == []


@pytest.mark.parametrize(
    ("indices", "count", "said"),
    [
        ((40, 41, 42, 43), 4, "sample indices 40\u201343"),
        ((7,), 1, "sample index 7"),
        ((3, 17, 942), 3, "sample indices 3, 17, 942 (3 in all)"),
        ((), 5, "5 samples"),
        (tuple(range(100, 120)), -1, "sample indices 100\u2013119 and more"),  # py-spy shows a list's first items
        ((9, 2, 7), -1, "sample indices 9, 2, 7, ... (more than 3)"),
        ((), -1, "samples not read"),
    ],
)
def test_the_batch_in_words(indices, count, said):
    from hangwatch.diagnose.workers import indices_text as _indices_text

    task = LoaderTask(1, 0, 5, count, indices, 0.0, 0.0, False, "Shards")
    assert _indices_text(task) == said


def _loop_read(**values: str):
    from hangwatch.records.evidence import LocalsRead

    return LocalsRead(0.0, 1, "_worker_loop", "torch/utils/data/_utils/worker.py", 374, tuple(values.items()))


@pytest.mark.parametrize(
    ("values", "want"),
    [
        (  # a map-style batch, whole: its indices and their count
            {"idx": "5", "index": "[40, 41, 42]", "worker_id": "1", "dataset": "<Shards at 0x7f30748c8a50>"},
            (1, 5, (40, 41, 42), 3, False, "Shards"),
        ),
        (  # py-spy's first items of a longer list: the count is not known
            {"idx": "7", "index": f"[{', '.join(str(i) for i in range(20))}, ...]", "worker_id": "0"},
            (0, 7, tuple(range(20)), -1, False, ""),
        ),
        (  # cut short by the capture: the last number may be part of one, left out
            {"idx": "7", "index": "[1000001, 1000002, 10000...", "worker_id": "0", "dataset_kind": "0"},
            (0, 7, (1000001, 1000002), -1, False, ""),
        ),
        (  # an IterableDataset: no indices; the dataset's class from its repr
            {"idx": "3", "index": "None", "worker_id": "2", "dataset": "<m.Stream at 0x1f>", "dataset_kind": "1"},
            (2, 3, (), 0, True, "Stream"),
        ),
        (  # a tensor of indices: its numbers are not shown
            {"idx": "3", "index": "<Tensor at 0x7f30748c8a50>", "worker_id": "2"},
            (2, 3, (), -1, False, ""),
        ),
        (  # nested (a batch sampler of pairs): not read as numbers
            {"idx": "3", "index": "[(0, 1, 2), (3, 4, 5)]", "worker_id": "2"},
            (2, 3, (), -1, False, ""),
        ),
        (  # keys of a custom sampler, whole: their count only
            {"idx": "3", "index": "['a', 'b', None]", "worker_id": "2"},
            (2, 3, (), 3, False, ""),
        ),
    ],
)
def test_a_workers_batch_is_read_from_its_own_loops_locals(values, want):
    """With no record kept by the job (heal off, or a job not under `hangwatch run`), the batch a stuck worker holds
    comes from torch's ``_worker_loop`` locals, as py-spy shows them; none where the batch number is not there."""
    t = loader.task_from_locals(42, _loop_read(**values))
    assert t is not None and t.from_locals and (t.sent, t.since, t.worker_pid) == (0.0, 0.0, 42)
    assert (t.worker_id, t.batch, t.indices, t.count, t.iterable, t.dataset) == want
    assert loader.task_from_locals(42, _loop_read(index="[1]", worker_id="0")) is None
    assert loader.task_from_locals(42, _loop_read(idx="1", index="[1]")) is None
    assert loader.task_from_locals(42, _loop_read(idx="--3", index="[1]", worker_id="0")) is None


def test_only_a_worker_in_a_batch_has_its_loop_read_not_one_whose_forked_stack_shows_the_parents_code():
    """A forked worker's stack continues below its own loop with a copy of its parent's frames (the training loop):
    those do not make an idle worker one in a batch. Of dl_worker_blocked's workers, only the stuck one is read."""
    import json
    from pathlib import Path

    from hangwatch.capture.locals import holding_a_batch
    from hangwatch.diagnose import diagnose
    from hangwatch.evidence_io import evidence_from_dict
    from hangwatch.records.evidence import Role

    fixture = Path(__file__).parent.parent / "fixtures/evidence/dataloader_worker_stuck-dl_worker_blocked.json"
    ev = evidence_from_dict(json.loads(fixture.read_text()))
    series = {p.info.pid: list(p.samples) for p in ev.processes}
    workers = {p.info.pid for p in ev.processes if p.info.role == Role.DATALOADER_WORKER}
    stuck = diagnose(ev).root.where
    assert len(workers) >= 2 and stuck is not None and stuck.pid in workers, (workers, stuck)
    assert holding_a_batch(series, workers) == {stuck.pid: {stuck.pid}}  # not the idle one waiting for an index

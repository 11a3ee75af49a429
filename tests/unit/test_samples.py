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


def test_the_hook_and_the_reader_agree_on_the_file(hook):
    assert (hook.LOADER_MAGIC, hook.LOADER_INDICES, hook.LOADER_SUFFIX) == (
        loader.MAGIC,
        loader.INDICES,
        layout.LOADER_SUFFIX,
    )
    assert (hook.LOADER_HEADER.format, hook.LOADER_SLOT.format) == (loader.HEADER.format, loader.SLOT.format)


def test_each_worker_holds_its_oldest_batch_not_yet_back(hook, tmp_path):
    t = hook._LoaderTasks(str(tmp_path), _iterator(), False)
    for batch in range(4):  # prefetch: two batches each, round robin
        t.sent(batch, list(range(8 * batch, 8 * batch + 8)), batch % 2)
    got = loader.loader_tasks(str(tmp_path), os.getpid())
    assert {pid: (x.worker_id, x.batch, x.indices[:2], x.count) for pid, x in got.items()} == {
        1000: (0, 0, (0, 1), 8),
        1001: (1, 1, (8, 9), 8),
    }
    t.received(0, 0)  # worker 0 returned batch 0: it is on batch 2 now, since then
    w0 = loader.loader_tasks(str(tmp_path), os.getpid())[1000]
    assert (w0.batch, w0.indices[0], w0.dataset, w0.iterable) == (2, 16, "Shards", False)
    assert w0.since >= w0.sent
    t.received(2, 0)
    assert loader.loader_tasks(str(tmp_path), os.getpid())[1000].batch == -1  # nothing outstanding
    t.close()
    assert loader.loader_tasks(str(tmp_path), os.getpid()) == {}


def test_with_heal_off_each_worker_writes_its_own_slot_and_the_main_process_none(hook, tmp_path):
    """Heal off: the main process makes the file and names each worker's pid, then leaves the slot to that worker,
    which finds it by its pid (the newest iterator's file first) and writes it as it takes a batch from its index
    queue and as it asks for the next. The main process writes nothing a batch (bench/samples.py)."""
    import queue

    stale = hook._LoaderTasks(str(tmp_path), _iterator(2), True)  # an older iterator whose worker had this pid
    stale.pids[1] = os.getpid()
    stale._write(1, None)
    before = bytes(stale.mm[:])
    it = _iterator(2)
    it._workers[1].pid = os.getpid()  # this test's process plays worker 1
    it._index_queues = [queue.Queue(), queue.Queue()]
    t = hook._start_tasks(SimpleNamespace(directory=str(tmp_path)), it, True)
    assert not any("put" in q.__dict__ for q in it._index_queues)  # the main process records nothing it sends
    kept = _iterator(2)
    kept._index_queues = [queue.Queue(), queue.Queue()]
    main = hook._start_tasks(SimpleNamespace(directory=str(tmp_path)), kept, False)
    assert all("put" in q.__dict__ for q in kept._index_queues)  # heal on: it does
    main.close()
    t.begin_reset()
    t.end_reset()
    assert os.getpid() not in loader.loader_tasks(str(tmp_path), os.getpid())  # nobody wrote it yet
    q: queue.Queue = queue.Queue()
    hook._record_gets(str(tmp_path), q, 1)
    q.put((4, [32, 33, 34]))
    q.put((6, range(48, 56)))
    assert q.get() == (4, [32, 33, 34])
    x = loader.loader_tasks(str(tmp_path), os.getpid())[os.getpid()]
    assert (x.worker_id, x.batch, x.indices, x.count, x.since >= x.sent > 0) == (1, 4, (32, 33, 34), 3, True)
    q.get()
    x = loader.loader_tasks(str(tmp_path), os.getpid())[os.getpid()]
    assert (x.batch, x.indices[:2], x.count) == (6, (48, 49), 8)
    for batch, index, kept in ((8, ["a", "b"], ()), (9, list(range(70)), tuple(range(hook.LOADER_INDICES)))):
        q.put((batch, index))  # keys of a custom sampler: their count only; a long batch: its first indices
        q.get()
        x = loader.loader_tasks(str(tmp_path), os.getpid())[os.getpid()]
        assert (x.batch, x.indices, x.count) == (batch, kept, len(index))
    with pytest.raises(queue.Empty):
        q.get(timeout=0.01)  # it asked for the next one: it holds none
    assert loader.loader_tasks(str(tmp_path), os.getpid())[os.getpid()].batch == -1
    assert bytes(stale.mm[: len(before)]) == before  # the older iterator's file untouched
    t.close()
    stale.close()


def test_a_worker_whose_slot_is_not_found_records_nothing_and_stops_looking(hook, tmp_path, monkeypatch):
    """A look that finds nothing (out of file descriptors, say) is tried again at the next batches, a few times."""
    import queue

    q: queue.Queue = queue.Queue()
    hook._record_gets(str(tmp_path), q, 0)
    looks = []
    monkeypatch.setattr(hook.os, "listdir", lambda d: looks.append(d) or [])
    for batch in range(6):
        q.put((batch, [batch]))
        assert q.get() == (batch, [batch])
    assert looks == [str(tmp_path)] * hook._WorkerSlot.LOOKS


def test_a_slot_no_one_wrote_since_the_file_was_made_is_not_a_record(hook, tmp_path):
    """A worker that never took a batch (still importing, hung in worker_init_fn) holds what nobody wrote: not
    "it returned every batch it was sent"."""
    it = _iterator(2)
    t = hook._LoaderTasks(str(tmp_path), it, True)
    assert loader.loader_tasks(str(tmp_path), os.getpid()) == {}
    t2 = hook._LoaderTasks(str(tmp_path), _iterator(1), False)
    t2.sent(0, [3], 0)
    assert [x.batch for x in loader.loader_tasks(str(tmp_path), os.getpid()).values()] == [0]
    t.close()
    t2.close()


def test_a_new_epoch_keeps_the_last_ones_batches_until_torch_has_them_back(hook, tmp_path):
    """Persistent workers: torch's reset first waits for the batches left from an epoch the loop left early; they
    stay recorded while it waits (a worker stuck on one is named with it), then go; the new epoch's stay."""
    t = hook._LoaderTasks(str(tmp_path), _iterator(1), False)
    t.sent(7, [70, 71], 0)
    t.begin_reset()
    t.sent(0, [0, 1], 0)  # the new epoch's first batch, sent while torch waits
    assert loader.loader_tasks(str(tmp_path), os.getpid())[1000].batch == 7
    t.end_reset()
    assert loader.loader_tasks(str(tmp_path), os.getpid())[1000].indices == (0, 1)
    t.received(0, 0)
    assert loader.loader_tasks(str(tmp_path), os.getpid())[1000].batch == -1


def test_an_exhausted_iterable_worker_holds_nothing(hook, tmp_path):
    t = hook._LoaderTasks(str(tmp_path), _iterator(1, iterable=True), False)
    t.sent(3, None, 0)
    t.sent(5, None, 0)
    t.done(0)  # its dataset ran out: torch never answers what it was sent after that
    x = loader.loader_tasks(str(tmp_path), os.getpid())[1000]
    assert (x.batch, x.iterable) == (-1, True)


def test_indices_that_are_a_tensor_or_a_range_are_counted(hook, tmp_path):
    import torch

    t = hook._LoaderTasks(str(tmp_path), _iterator(1), False)
    t.sent(0, torch.tensor([5, 6, 7]), 0)
    assert loader.loader_tasks(str(tmp_path), os.getpid())[1000].indices == (5, 6, 7)
    t.sent(1, range(10, 14), 0)
    t.received(0, 0)
    x = loader.loader_tasks(str(tmp_path), os.getpid())[1000]
    assert (x.count, x.indices) == (4, (10, 11, 12, 13))


def test_indices_that_are_not_numbers_keep_only_their_count(hook, tmp_path):
    t = hook._LoaderTasks(str(tmp_path), _iterator(1), False)
    t.sent(0, ["key-a", "key-b", "key-c"], 0)
    x = loader.loader_tasks(str(tmp_path), os.getpid())[1000]
    assert (x.count, x.indices) == (3, ())
    t.sent(1, list(range(500)), 0)  # a huge batch: its first 64 indices, and its count
    t.received(0, 0)
    x = loader.loader_tasks(str(tmp_path), os.getpid())[1000]
    assert (x.count, len(x.indices), x.indices[-1]) == (500, 64, 63)


def test_a_slot_caught_mid_write_is_left_out_alone(hook, tmp_path):
    t = hook._LoaderTasks(str(tmp_path), _iterator(2), False)
    t.sent(0, [1, 2], 0)
    t.sent(1, [3, 4], 1)
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
    ],
)
def test_the_batch_in_words(indices, count, said):
    from hangwatch.diagnose.workers import indices_text as _indices_text

    task = LoaderTask(1, 0, 5, count, indices, 0.0, 0.0, False, "Shards")
    assert _indices_text(task) == said

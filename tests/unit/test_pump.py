"""The output pumps on real pipes (supervise/job/launch.py): a stream that comes slowly is read in fewer, larger
chunks (the pump rests between reads), output.log keeps every byte of stdout and stderr, each of our own streams
gets its bytes exact, and a flood is never held back by a rest."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from hangwatch.supervise.job.launch import REST_S, OutputLog, Pump, StatusLine, Streams, _widen_pipe

WAIT_S = 10.0


def _pumps(
    tmp_path: Path, n: int, shared: bool = False
) -> tuple[list[int], list[Path], list[Pump], OutputLog, list[tuple[float, bytes]]]:
    """``n`` pipes, each pumped into a file of its own (``shared``: one file for all, as `2>&1`) and into one
    output.log; the writers' ends, those files, the pumps (started), the log and each chunk read, with its stamp."""
    log = OutputLog(open(tmp_path / "output.log", "ab"), tmp_path / "output.log")  # noqa: SIM115 - closed below
    streams, writers, outs, pumps, reads = Streams(), [], [], [], []
    for i in range(n):
        r, w = os.pipe()
        _widen_pipe(r)
        out = tmp_path / f"out{0 if shared else i}"
        dst = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        pumps.append(
            Pump(r, dst, log, lambda data, at: reads.append((at, data)), StatusLine(enabled=False), None, streams)
        )
        writers.append(w)
        outs.append(out)
    for p in pumps:
        p.start()
    return writers, outs, pumps, log, reads


def _end(writers: list[int], pumps: list[Pump], log: OutputLog) -> None:
    for w in writers:
        os.close(w)
    for p in pumps:
        p.join(WAIT_S)
        assert not p.is_alive()
        os.close(p.dst_fd)
    log.close()


def test_a_stream_that_comes_slowly_is_read_in_fewer_chunks_and_logged_exact(tmp_path):
    """60 flushes 5 ms apart (a job printing a few lines each step): about one read per rest, not one per flush."""
    writers, outs, pumps, log, reads = _pumps(tmp_path, 1)
    sent = b""
    for i in range(60):
        line = f"step {i} loss 0.25\n".encode()
        os.write(writers[0], line)
        sent += line
        time.sleep(0.005)
    _end(writers, pumps, log)
    assert (tmp_path / "output.log").read_bytes() == sent and outs[0].read_bytes() == sent
    assert len(reads) <= 0.3 / REST_S + 4, len(reads)  # 0.3 s of writes: was one read each, 60


def test_what_a_rest_let_in_is_stamped_when_the_rest_began_and_what_follows_a_quiet_as_read(tmp_path):
    """A line written during a rest is read up to REST_S later: it is stamped no later than it was written (a counter
    line stamped after the heartbeat it came before said the counter had moved past the beats: HF's trainer, hung,
    was recorded with the log's counter as its last progress once in CI). A line after a quiet second, read at once,
    is stamped as read, never with an old rest's start."""
    writers, _, pumps, log, reads = _pumps(tmp_path, 1)
    os.write(writers[0], b"step 1\n")
    deadline = time.monotonic() + WAIT_S
    while not reads and time.monotonic() < deadline:  # the pump has read it and rests (under load: later than 20 ms)
        time.sleep(0.002)
    written = time.time()
    os.write(writers[0], b"step 2\n")
    time.sleep(1.0)
    late = time.time()
    os.write(writers[0], b"step 3\n")
    _end(writers, pumps, log)
    stamp = {line: at for at, data in reads for line in data.splitlines()}
    assert stamp[b"step 2"] <= written, (stamp, written)
    assert stamp[b"step 3"] >= late, (stamp, late)


def _streams(data: bytes) -> tuple[bytes, bytes]:
    """The lines of ``data`` that came from stdout (``out N``) and from stderr (``err N``), each in its order."""
    lines = data.splitlines(keepends=True)
    return b"".join(ln for ln in lines if ln.startswith(b"out")), b"".join(ln for ln in lines if ln.startswith(b"err"))


@pytest.mark.parametrize("shared", [False, True], ids=["own-files", "one-file"])
def test_stdout_and_stderr_each_keep_their_bytes_and_order_through_two_pipes(tmp_path, shared):
    """Lines written to two pipes in turn (stderr every third), 3 ms apart: one pump rests while the other reads, and
    reads what the resting one holds before its own. Each of our streams gets its own bytes exact, output.log every
    byte of both with each stream's in its order. Which of two pipes was written first no read can say (a pump
    that read first may log later on a loaded machine): where our own streams are one file, the job gets one pipe
    (tests/e2e/test_run_e2e.py: the order written, exact)."""
    writers, outs, pumps, log, _ = _pumps(tmp_path, 2, shared)
    sent: list[bytes] = [b"", b""]
    for i in range(120):
        which = 1 if i % 3 == 0 else 0
        line = f"{'err' if which else 'out'} {i}\n".encode()
        os.write(writers[which], line)
        sent[which] += line
        time.sleep(0.003)
    _end(writers, pumps, log)
    logged = (tmp_path / "output.log").read_bytes()
    assert len(logged) == len(sent[0]) + len(sent[1]) and _streams(logged) == tuple(sent)
    assert _streams(outs[0].read_bytes()) == tuple(sent) if shared else [o.read_bytes() for o in outs] == sent


@pytest.mark.parametrize("quiet", [False, True], ids=["at-once", "after-a-quiet-second"])
def test_a_flood_is_never_held_back_by_a_rest(tmp_path, quiet):
    """32 MiB in 64 KiB writes, as fast as the pipe takes them, from the start or after a line and a quiet second
    (the pump rests after that line): the pump reads on. A rest after each read would hold the writer a tenth of a
    second each time the pipe filled; a rate that counted the rests in never rose above the limit again (2.5 MiB/s)."""
    writers, outs, pumps, log, _ = _pumps(tmp_path, 1)
    block = b"y" * 127 + b"\n"
    block *= 512
    took: list[float] = []
    head = b"loading\n" if quiet else b""
    os.write(writers[0], head)
    time.sleep(1.1 if quiet else 0.0)

    def flood() -> None:
        t = time.monotonic()
        for _ in range(512):
            os.write(writers[0], block)
        took.append(time.monotonic() - t)

    writer = threading.Thread(target=flood)
    writer.start()
    writer.join(WAIT_S)
    _end(writers, pumps, log)
    assert outs[0].stat().st_size == len(head) + 512 * len(block) == (tmp_path / "output.log").stat().st_size
    # a rest each time the 1 MiB pipe filled: 32 fills, 3.2 s at least on top of the copy; the copy's own time is
    # measured beside it (a plain reader copying the same flood to a file), as a loaded machine stretches both
    assert took and took[0] < _plain_copy_s(tmp_path, block, 512) + 16 * REST_S, took


def _plain_copy_s(tmp_path: Path, block: bytes, count: int) -> float:
    """How long ``count`` writes of ``block`` take into a pipe that a thread drains to a file, with no pump."""
    r, w = os.pipe()
    _widen_pipe(w)

    def drain() -> None:
        with open(tmp_path / "plain.log", "wb") as f:
            while chunk := os.read(r, 1 << 16):
                f.write(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    t = time.monotonic()
    for _ in range(count):
        os.write(w, block)
    took = time.monotonic() - t
    os.close(w)
    reader.join(WAIT_S)
    os.close(r)
    return took

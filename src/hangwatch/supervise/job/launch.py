"""Launch a job in its own session and pump its output, byte for byte, to the terminal and the log.

Under a terminal the job gets a pseudo-terminal (so it line-buffers and progress bars render);
output post-processing is turned off on it, so the bytes the job writes are the bytes we log.
Without a terminal (CI, nohup, Slurm) it gets pipes. Either way hangwatch's own stdout/stderr
receive the job's output unchanged.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import pty
import select
import stat
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import IO, BinaryIO

from hangwatch.capture.proc import SUPERVISOR_ENV
from hangwatch.records.layout import OUTPUT_BUFFER
from hangwatch.records.values import mutable

log = logging.getLogger(__name__)

READ_SIZE = 256 * 1024
FLUSH_EVERY_S = 0.5  # output.log's buffer is flushed by the first write (or watchdog round) this long after the last
EXEC_SHIM = Path(__file__).resolve().parents[2] / "_exec.py"  # hangwatch/_exec.py

OnChunk = Callable[[bytes, float], None]
DRAIN_MAX_S = 15.0  # the longest a job's end waits for its pumps while they still read (a drain's quiet bound aside)
HELD_MIN_S = 0.2  # a pass-through write that took this long waited for its reader (a plain one takes microseconds)
REST_S = 0.1  # a pump whose job writes little rests this long after a read (Streams)


class StatusLine:
    """A one-line status on a terminal's stderr, erased before the job's output is written."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.shown = False
        self.lock = threading.Lock()

    def clear(self) -> None:
        """Erase the status line, if shown (and its terminal can take it now)."""
        if self.shown:
            with self.lock:
                if self.shown and _room(2):
                    _write_all(2, b"\r\x1b[K")
                    self.shown = False

    def show(self, text: str) -> None:
        """Show ``text`` as the status line, where its terminal can take it now: a terminal paused by Ctrl-S has no
        room, and the status waits, never the run loop (neither this nor ``clear`` writes without room, so neither
        holds the lock across a wait)."""
        if not self.enabled:
            return
        with self.lock:
            if _room(2):
                _write_all(2, b"\r\x1b[K" + text.encode(errors="replace")[:300])
                self.shown = True


def _room(fd: int) -> bool:
    """Whether ``fd`` takes a short write now without waiting (a status line is under PIPE_BUF: written whole)."""
    try:
        return bool(select.select([], [fd], [], 0)[1])
    except (OSError, ValueError):
        return False


def _write_all(fd: int, data: bytes, wrote: Callable[[], None] | None = None) -> bool:
    """Write everything (``wrote``: called after each write that took some); False if it cannot be written (the
    reader went away), so passing through stops."""
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
            if wrote is not None:
                wrote()
        except InterruptedError:
            continue
        except BlockingIOError:
            time.sleep(0.001)
            continue
        except OSError:  # the reader went away (EPIPE), a hung-up terminal (EIO), a full disk (ENOSPC)
            return False
        view = view[n:]
    return True


@mutable
class OutputLog:
    """output.log, shared by the pumps of all attempts; each chunk is written whole. With ``max_size``, it
    rotates once it holds that many bytes: output.log becomes output.log.1 (.1 becomes .2, ...; past
    ``keep`` the oldest goes), and a new output.log starts. Read newest last, the files hold the output
    byte for byte. ``written`` counts every byte of the run, rotated or not: an attempt's output starts
    at a ``written`` offset, and ``tail`` reads from there across the files.

    The file is buffered (``OUTPUT_BUFFER``): a pump's write flushes it once ``FLUSH_EVERY_S`` passed since the last
    flush, the run's watchdog thread flushes what a quiet job left in it (``flush_if_due``, every second), and so
    does every read of the tail: a job's chatter costs a file write every half second instead of one per chunk
    (bench/soak.py), and neither the run loop nor a pump's read waits on the file. Only hangwatch itself killed by
    SIGKILL loses the last second's bytes from the file (never from the terminal, which gets each chunk as it
    comes). A file that cannot be written (a full disk) is said once in hangwatch's log and left alone: the job's
    output still reaches the terminal and the progress reader."""

    file: BinaryIO
    path: Path | None = None  # output.log (needed to rotate and to read the tail)
    max_size: int | None = None
    keep: int = 5
    lock: threading.Lock = field(default_factory=threading.Lock)
    written: int = 0
    rotations: int = 0
    _size: int = 0  # bytes in the current output.log
    _flushed_at: float = 0.0  # time.monotonic() of the newest flush
    unwritten: bool = False  # bytes in the buffer, not yet in the file
    failed: str | None = None  # why the file could not be written (then it is not written again)

    def __post_init__(self) -> None:
        try:
            self._size = os.fstat(self.file.fileno()).st_size  # a run directory used again appends
        except (OSError, ValueError):
            self._size = 0
        self.written = self._size

    def write(self, data: bytes) -> None:
        """Append a chunk, whole (then rotate, if the file is full)."""
        with self.lock:
            self.written += len(data)
            self._size += len(data)
            if self.failed is not None:
                return
            if self.file.closed:  # a pump still reading after the run closed the log (its drain gave up)
                self._fail(OSError(f"{len(data)} bytes came after output.log was closed"))
                return
            try:
                self.file.write(data)
                self.unwritten = True
                if self.max_size is not None and self.path is not None and self._size >= self.max_size:
                    self._rotate(self.path)
                elif time.monotonic() - self._flushed_at >= FLUSH_EVERY_S:
                    self._flush()
            except OSError as e:  # a full disk, a quota: the output still reaches the terminal
                self._fail(e)

    def _fail(self, e: OSError) -> None:
        self.failed = f"{type(e).__name__}: {e}"
        log.warning("output.log cannot be written (%s); the job's output still reaches the terminal", self.failed)

    def _flush(self) -> None:
        if self.failed is None:
            try:
                self.file.flush()
            except OSError as e:
                self._fail(e)
        self._flushed_at, self.unwritten = time.monotonic(), False

    def flush_if_due(self) -> None:
        """Flush what waits in the buffer once ``FLUSH_EVERY_S`` passed since the last flush (a quiet job's last
        bytes; a busy job's pumps flush as they write)."""
        if self.unwritten and time.monotonic() - self._flushed_at >= FLUSH_EVERY_S:
            with self.lock:
                self._flush()

    def _rotate(self, path: Path) -> None:
        self.file.close()
        for k in range(self.keep, 0, -1):
            older = path.with_name(f"{path.name}.{k}")
            if k == self.keep:
                older.unlink(missing_ok=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    older.rename(path.with_name(f"{path.name}.{k + 1}"))
        if self.keep > 0:
            path.rename(path.with_name(f"{path.name}.1"))
        else:
            path.unlink(missing_ok=True)
        self.file = open(path, "ab", buffering=OUTPUT_BUFFER)  # noqa: SIM115 - closed by close() or the next rotation
        self._size = 0
        self.rotations += 1

    def files(self) -> list[Path]:
        """output.log and its rotated files, oldest first."""
        if self.path is None:
            return []
        rotated = sorted(
            (p for p in self.path.parent.glob(f"{self.path.name}.*") if p.suffix[1:].isdigit()),
            key=lambda p: -int(p.suffix[1:]),
        )
        return [*rotated, self.path]

    def tail(self, since: int, limit: int) -> bytes:
        """Up to ``limit`` of the newest bytes written at or after offset ``since``, across rotated files."""
        want = max(0, min(limit, self.written - since))
        with self.lock:
            self._flush()
            parts: list[bytes] = []
            for p in reversed(self.files()):
                if want <= 0:
                    break
                try:
                    with open(p, "rb") as f:
                        size = f.seek(0, os.SEEK_END)
                        take = min(size, want)
                        f.seek(size - take)
                        parts.append(f.read(take))
                        want -= take
                except OSError:
                    break
        return b"".join(reversed(parts))

    def flush(self) -> None:
        """Flush to the file."""
        with self.lock:
            self._flush()

    def close(self) -> None:
        """Close the current file (what its buffer holds written first, where it can be)."""
        with self.lock:
            try:
                self.file.close()
            except OSError as e:
                self._fail(e)


class Pump(threading.Thread):
    """Copies one output stream of the job to the log and to our own stream, byte for byte."""

    def __init__(
        self,
        src_fd: int,
        dst_fd: int,
        log: OutputLog,
        on_chunk: OnChunk,
        status: StatusLine,
        on_close: Callable[[], None] | None = None,
        group: Streams | None = None,
    ) -> None:
        super().__init__(name=f"hangwatch-pump-{dst_fd}", daemon=True)
        self.src_fd, self.dst_fd, self.log, self.on_chunk, self.status = src_fd, dst_fd, log, on_chunk, status
        self.on_close = on_close
        self.passthrough = True
        self.closed = False  # the job closed its end (read to EOF)
        # Since when the pass-through waits for our own stream's reader (a pager at its prompt, a terminal paused by
        # Ctrl-S); a file is never such a reader (supervise/job/held.py).
        self.held_since: float | None = None
        self.to_file = _is_file(dst_fd)
        self.read_at = time.monotonic()  # when it last read a chunk or passed one on (a drain waits while it does)
        self.group = group or Streams()
        self.out_lock = threading.Lock()  # held while a chunk of this stream is passed on, by whichever pump
        # When its rest began, while what the rest let in waits to be read: those bytes were written after it (the
        # read before the rest left none), so they are stamped with it, not with their read up to REST_S later (a
        # counter line stamped after a heartbeat it came before would say the counter moved on past the beats).
        self.rested_at: float | None = None
        self.flow = _Flow(_capacity(src_fd))

    def _moved(self) -> None:
        self.read_at = time.monotonic()

    def run(self) -> None:
        """Read until the job closes its end."""
        # One buffer for every read: os.read(fd, READ_SIZE) would allocate READ_SIZE (past malloc's mmap threshold:
        # an mmap, an mremap and a munmap a chunk) to keep a few hundred bytes.
        buf = memoryview(bytearray(READ_SIZE))
        try:
            while True:
                try:
                    data = bytes(buf[: os.readv(self.src_fd, [buf])])
                except InterruptedError:
                    continue
                except OSError as e:
                    if e.errno == errno.EIO:  # pty: every slave end closed (the job is gone)
                        break
                    raise
                if not data:
                    break
                self.group.take(self, data)
                self.rested_at = None
                if self.flow.rests_after(len(data)) and not _queued(self.src_fd):
                    self.group.rest(self)  # (where no other pump rests)
        finally:
            os.close(self.src_fd)
            self.closed = True
            if self.on_close is not None:
                self.on_close()  # the job closed its output (usually: it exited): wake the loop now

    def log_chunk(self, data: bytes) -> None:
        """Log a chunk read from this stream (under the group's lock: the log holds the streams in the order read)."""
        self._moved()
        self.log.write(data)
        self.on_chunk(data, self.rested_at or time.time())  # progress as read, before the pass-through may wait

    def pass_on(self, data: bytes) -> None:
        """Our own stream gets the chunk, until its reader goes away (``out_lock`` held: in order)."""
        if self.passthrough:
            self.held_since = time.monotonic()
            try:
                self.status.clear()
                self.passthrough = _write_all(self.dst_fd, data, self._moved)
            finally:
                self.held_since = None


class Streams:
    """The output streams of one job (stdout and stderr under pipes). A pump whose job writes little rests REST_S
    after a read, so that what the job writes meanwhile comes in one read (a job flushing 20 lines 50 times a second
    cost 50 reads, log writes and pass-throughs a second: the pump was 60 % of hangwatch's CPU at rest). One pump
    rests at a time; another that reads first reads what the resting one holds (written before its own), logs it and
    passes it on, then its own: output.log keeps the two streams in the order the job wrote them where the reads do
    not say otherwise (two pipes cannot: a pump that reads first may log later; where our own stdout and stderr are
    one file, the job gets one pipe, ``launch``), and each stream's bytes exact."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.resting: Pump | None = None

    def take(self, pump: Pump, data: bytes) -> None:
        """``data``, read from ``pump``'s stream, logged and passed on, after what the resting pump holds."""
        with self.lock:
            held = self._take_resting(pump)
            pump.log_chunk(data)
            pump.out_lock.acquire()  # before the lock goes: the resting pump's next chunk waits for these
        try:
            if held is not None:
                held[0].pass_on(held[1])
            pump.pass_on(data)
        finally:
            pump.out_lock.release()
            if held is not None:
                held[0].out_lock.release()  # (after its own: the woken pump's next chunk comes after both)

    def rest(self, pump: Pump) -> None:
        """``pump`` rests REST_S where no other pump does."""
        with self.lock:
            if self.resting is not None:
                return
            self.resting, pump.rested_at = pump, time.time()
        time.sleep(REST_S)
        with self.lock:
            self.resting = None
            if not _queued(pump.src_fd):
                pump.rested_at = None  # (what comes next is stamped as read)

    def _take_resting(self, reader: Pump) -> tuple[Pump, bytes] | None:
        """(Under the lock) what the resting pump's stream holds, read and logged by ``reader`` before its own, with
        that pump's ``out_lock`` taken for it to be passed on; None where there is none."""
        p = self.resting
        if p is None or p is reader:
            return None
        try:
            pending = _queued(p.src_fd)
            data = os.read(p.src_fd, pending) if pending > 0 else b""  # (it reads nothing while it rests: no wait)
        except OSError:
            return None  # (its end closed: the pump reads its end itself once it wakes)
        if not data:
            return None
        p.log_chunk(data)
        p.flow.bytes += len(data)  # (its rate counts them)
        p.out_lock.acquire()
        return p, data


class _Flow:
    """How fast a stream comes, to say whether its pump may rest (REST_S) without the writer ever waiting on it: only
    after a read of under a quarter of its buffer, and while, at the rate of the last second, REST_S fills less."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.most = capacity / 4 / REST_S  # bytes a second
        self.since, self.bytes, self.rate = time.monotonic(), 0, 0.0

    def rests_after(self, n: int) -> bool:
        """Count a read of ``n`` bytes; whether the pump may rest now."""
        now = time.monotonic()
        self.bytes += n
        took = now - self.since
        if took >= 1.0:
            self.rate, self.since, self.bytes = self.bytes / took, now, 0
            return n * 4 < self.capacity and self.rate < self.most
        return n * 4 < self.capacity and max(self.rate, self.bytes / max(took, REST_S)) < self.most


def _capacity(fd: int) -> int:
    """What the job's side of ``fd`` holds before its writer waits: a pipe's size, a pty's line buffer (4 KiB)."""
    try:
        return int(fcntl.fcntl(fd, F_GETPIPE_SZ))
    except OSError:
        return 4096


@mutable
class Launched:
    """A started job: its Popen and its output pumps."""

    popen: subprocess.Popen[bytes]
    pumps: list[Pump]

    @property
    def pid(self) -> int:
        """The job's root process."""
        return self.popen.pid

    def output_held(self) -> int | None:
        """The fd (1 or 2) whose reader holds the job now: the pass-through has waited on it for HELD_MIN_S at least,
        and the job's side of its output is at least half full (FIONREAD against the pipe's size, or a pty's 4 KiB
        line buffer): the job waits, or soon will, to write. None otherwise."""
        now = time.monotonic()
        for p in self.pumps:
            since = p.held_since
            if since is not None and now - since >= HELD_MIN_S and not p.to_file and _backed_up(p.src_fd):
                return p.dst_fd
        return None

    def output_closed(self) -> bool:
        """Every output stream of the job was read to its end (the job is usually exiting)."""
        return all(p.closed for p in self.pumps)

    def join_pumps(self, quiet_s: float) -> None:
        """Wait for the pumps to read the last output: until each has read to its end, or none has read or passed on
        bytes for ``quiet_s`` since the wait began (a process outside the job holds the pipe open; the reader of our
        own output holds the pass-through), DRAIN_MAX_S at most. A fixed 5 s lost bytes: a job that ends with its
        1-MiB pipe full behind a slow reader of our output takes longer to pass it all on."""
        start = time.monotonic()
        for p in self.pumps:
            while p.is_alive():
                moved = max(start, *(q.read_at for q in self.pumps))
                left = min(start + DRAIN_MAX_S, moved + quiet_s) - time.monotonic()
                if left <= 0:
                    return
                p.join(min(left, 0.5))


PIPE_SIZE = 1 << 20
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)


def _is_file(fd: int) -> bool:
    """Whether ``fd`` is a regular file (never a reader that chooses not to read)."""
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        return False


def _queued(fd: int) -> int:
    """How many bytes wait in our read end ``fd`` (FIONREAD); 0 where it cannot be read."""
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])
    except OSError:
        return 0


def _backed_up(fd: int) -> bool:
    """Whether the job's side of our read end ``fd`` holds at least half of what it can (a pipe's size; a pty's
    line buffer, 4 KiB)."""
    return _queued(fd) * 2 >= _capacity(fd)


def _widen_pipe(fd: int) -> None:
    """A 1 MiB pipe instead of 64 KiB: 16x fewer reads for a job that floods its output."""
    try:
        fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE)
    except OSError:
        pass  # above /proc/sys/fs/pipe-max-size for an unprivileged user: keep the default


def _one_file(a: int, b: int) -> bool:
    """Whether our fds ``a`` and ``b`` are one file (``2>&1``, or both opened on it): the job's two streams may be
    one pipe then, and its bytes keep the order it wrote them in (two pipes cannot say which came first)."""
    try:
        sa, sb = os.fstat(a), os.fstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _our_end(pipe: IO[bytes] | None) -> int:
    """Our read end of a job's output pipe, as a bare fd (widened; Popen's file object closed)."""
    assert pipe is not None  # noqa: S101 - PIPE was asked for
    fd = os.dup(pipe.fileno())
    pipe.close()
    _widen_pipe(fd)
    return fd


def _raw_output(fd: int) -> None:
    """No output post-processing on the pty (no \\n -> \\r\\n): the log gets the job's bytes."""
    attrs = termios.tcgetattr(fd)
    attrs[1] &= ~termios.OPOST
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


def _copy_winsize(dst_fd: int) -> None:
    for src in (1, 2, 0):
        try:
            packed = fcntl.ioctl(src, termios.TIOCGWINSZ, b"\0" * 8)
        except OSError:
            continue
        rows, cols = struct.unpack("HHHH", packed)[:2]
        if rows and cols:
            fcntl.ioctl(dst_fd, termios.TIOCSWINSZ, packed)
            return


def launch(
    argv: list[str],
    env: dict[str, str],
    cwd: str | None,
    log: OutputLog,
    on_chunk: OnChunk,
    status: StatusLine,
    use_pty: bool,
    on_close: Callable[[], None] | None = None,
) -> Launched:
    """Start ``argv`` through the exec shim, in a new session, with its output pumped."""
    cmd = [sys.executable, "-S", str(EXEC_SHIM), *argv]  # -S: no site, the shim is stdlib only
    env = {**env, SUPERVISOR_ENV: str(os.getpid())}
    if use_pty:
        master, slave = pty.openpty()
        try:
            _raw_output(slave)
            _copy_winsize(slave)
            popen = subprocess.Popen(cmd, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True)
        except BaseException:  # the pty's master closed, whatever stopped the launch; re-raised
            os.close(master)
            raise
        finally:
            os.close(slave)
        pumps = [Pump(master, 1, log, on_chunk, status, on_close)]
    elif _one_file(1, 2):  # 2>&1 (a batch system's one .out file, `| tee`): one pipe, in the order written
        popen = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
        )
        pumps = [Pump(_our_end(popen.stdout), 1, log, on_chunk, status, on_close)]
    else:
        popen = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd, start_new_session=True
        )
        streams = Streams()
        ends = ((_our_end(popen.stdout), 1), (_our_end(popen.stderr), 2))
        pumps = [Pump(fd, dst, log, on_chunk, status, on_close, streams) for fd, dst in ends]
    for p in pumps:
        p.start()
    return Launched(popen, pumps)

"""`hangwatch agent`: one process per node that finds the training jobs there and attaches to each as it appears
(`hangwatch attach`, one child process per job, each with its own run directory under the runs directory), lets each
go as it ends, and serves every job's metrics on one endpoint.

Which jobs: a Python process with torch loaded, taken at its topmost Python ancestor of the same user (the launcher:
torchrun, accelerate, the script that spawned its ranks), of a user it was told to watch; a process of any other user is
never read beyond its owner (the owner of its /proc directory). A job already under `hangwatch run` is its supervisor's:
the agent only lists it on its endpoint, from that run's summary.json.
What it may do: report, unless the job's user is one it was told it may act on (then --on-hang as given).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pwd
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hangwatch.capture import proc
from hangwatch.errors import UsageError
from hangwatch.records.layout import SUMMARY, command_name
from hangwatch.records.run import RunSummary
from hangwatch.records.values import frozen, mutable
from hangwatch.redact import redact_argv
from hangwatch.supervise.job.attached import RUN_DIR_ENV  # every process of a `hangwatch run` job carries it

log = logging.getLogger(__name__)

SCAN_EVERY_S = 5.0  # how often the host's processes are looked over for new jobs
STOP_WAIT_S = 10.0  # how long the attach children are given to detach when the agent stops
TORCH_LIBRARY = re.compile(rb"/libtorch(_cpu|_python|_cuda)?\.so|/torch/_C\.")
METRICS_FILE = "metrics.prom"
# Launchers that start each rank in a session of its own (torch elastic's subprocess handler does)
LAUNCHERS = re.compile(r"torchrun|torch\.distributed\.(run|launch)|accelerate|deepspeed")
ALL = "*"


@frozen
class Found:
    """A job on the host: its root (pid and start time), its owner, its command line."""

    pid: int
    started: int
    uid: int
    argv: list[str]

    @property
    def key(self) -> tuple[int, int]:
        """Its identity across pid reuse."""
        return self.pid, self.started


def user_ids(names: list[str]) -> set[int] | None:
    """The uids of the users named (``*``: every user, None); a name no user has is a UsageError."""
    if ALL in names:
        return None
    out = set()
    for name in names:
        try:
            out.add(int(name) if name.isdigit() else pwd.getpwnam(name).pw_uid)
        except KeyError:
            raise UsageError(f"no user is named {name!r}", "Name a user of this machine, or '*' for all") from None
    return out


def _is_python(pid: int) -> bool:
    try:
        return os.path.basename(os.readlink(proc.PROC / str(pid) / "exe")).startswith(("python", "pypy"))
    except OSError:
        return False


def _has_torch(pid: int) -> bool:
    try:
        return TORCH_LIBRARY.search((proc.PROC / str(pid) / "maps").read_bytes()) is not None
    except OSError:
        return False


def _supervisor_run_dir(pid: int) -> str | None:
    """The run directory of the `hangwatch run` whose job ``pid`` is part of; None: no such run. "" where the
    environment cannot be read: not ours to watch either."""
    try:
        env = (proc.PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return ""
    key = RUN_DIR_ENV.encode() + b"="
    for item in env.split(b"\0"):
        if item.startswith(key):
            return item[len(key) :].decode(errors="replace")
    return None


def _supervised(pid: int) -> bool:
    return _supervisor_run_dir(pid) is not None


def find_jobs(
    users: set[int] | None,
    skip: set[int],
    match: re.Pattern[str] | None = None,
    members: set[tuple[int, int]] | None = None,
    watched: set[int] | None = None,
    runs: set[tuple[str, int]] | None = None,
) -> list[Found]:
    """The training jobs of ``users`` (None: every user) on the host, each once, at its root; ``skip``: pids that
    are never jobs (the agent and its children, and their trees); ``match``: only roots whose command line it
    finds. ``members`` (pid, start time) gets every process seen under a ``watched`` root, and keeps only the living:
    a worker orphaned as its job ends is not a new job. ``runs`` gets the run directory (and the user) of each
    job under `hangwatch run` (those are not returned: each is its supervisor's; ``match`` applies to them where their
    run's summary is read, to the command given to `hangwatch run`)."""
    owners, family, started = _processes_of(users)
    mine = {os.getpid(), *_ancestors(os.getpid())}  # the agent's own line: never a job it could end
    if members is not None:
        alive = {(pid, started[pid]) for pid in family}
        members &= alive
        members |= {(pid, started[pid]) for pid in family if watched and any(p in watched for p in _up(pid, family))}
    roots: dict[int, Found] = {}
    for pid, uid in owners.items():
        if (members is not None and (pid, started[pid]) in members) or (watched and pid in watched):
            continue  # of a job already watched (its memory map is not read again)
        if pid in skip or not _is_python(pid) or not _has_torch(pid):
            continue  # not a training process
        run_dir = _supervisor_run_dir(pid)
        if run_dir is not None:  # one of a `hangwatch run` job: its supervisor's
            if run_dir and runs is not None:
                runs.add((run_dir, uid))
            continue
        root = pid
        while _launched_by(root, family, owners):
            root = family[root][0]
        if root in roots or root in mine or root in skip or any(p in skip for p in _up(root, family)):
            continue
        argv = list(proc.read_cmdline(root))
        if match is not None and not match.search(" ".join(argv)):
            continue
        st = proc.read_stat(proc.PROC / str(root) / "stat")
        if st is not None and st.state != "Z":
            roots[root] = Found(root, st.starttime, uid, argv)
    return list(roots.values())


def _processes_of(
    users: set[int] | None,
) -> tuple[dict[int, int], dict[int, tuple[int, int]], dict[int, int]]:
    """The processes of ``users`` (None: every user) on the host: pid -> owner, pid -> (ppid, pgid), pid -> start
    time. Another user's process is not read (its /proc directory's owner says whose it is)."""
    owners: dict[int, int] = {}
    family: dict[int, tuple[int, int]] = {}
    started: dict[int, int] = {}
    for pid in proc.list_pids():
        uid = proc.owner_of(pid)  # the directory's owner: nothing of the process is read
        if uid is None or (users is not None and uid not in users):
            continue  # another user's: not read
        st = proc.read_stat(proc.PROC / str(pid) / "stat")
        if st is not None:
            owners[pid], family[pid], started[pid] = uid, (st.ppid, st.pgid), st.starttime
    return owners, family, started


def _launched_by(pid: int, family: dict[int, tuple[int, int]], owners: dict[int, int]) -> bool:
    """Whether ``pid``'s parent is part of the same job: a Python launcher of the same user in the same process group
    (torchrun and its ranks, a main process and its workers). A shell's job has a group of its own; a driver that
    started the job in a session of its own (a test, a scheduler) is not its launcher."""
    ppid, pgid = family[pid]
    if ppid not in family or owners[ppid] != owners[pid] or not _is_python(ppid) or _supervised(ppid):
        return False  # `hangwatch run` itself is not the job's launcher
    argv = " ".join(proc.read_cmdline(ppid)[:4])
    if "hangwatch" in argv:
        return False
    return family[ppid][1] == pgid or LAUNCHERS.search(argv) is not None  # torchrun starts each rank in a session


def _up(pid: int, family: dict[int, tuple[int, int]]) -> Iterator[int]:
    """The ancestors of ``pid`` among the watched users' processes (no other process is read)."""
    seen = set()
    while pid in family and pid not in seen:
        seen.add(pid)
        pid = family[pid][0]
        yield pid


def _ancestors(pid: int) -> Iterator[int]:
    """The agent's own ancestors."""
    seen = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        st = proc.read_stat(proc.PROC / str(pid) / "stat")
        if st is None:
            return
        pid = st.ppid
        yield pid


@mutable
class Watched:
    """One job the agent attached to: the `hangwatch attach` child that watches it, and its run directory."""

    job: Found
    child: subprocess.Popen[bytes]
    run_dir: Path


@mutable
class AgentConfig:
    """What the agent watches, what it may do, where it writes."""

    runs_dir: Path
    users: set[int] | None  # whose jobs it watches (None: every user's)
    act_users: set[int] | None  # whose jobs --on-hang applies to (the rest: report); empty: none
    on_hang: str = "report"
    attach_args: tuple[str, ...] = ()  # passed to each `hangwatch attach` (--min-stall, --notify, ...)
    metrics_port: int | None = None
    scan_every: float = SCAN_EVERY_S
    match: re.Pattern[str] | None = None  # only jobs whose command line it finds


def say(text: str) -> None:
    """One line of what the agent did, on its stderr (a service's journal)."""
    print(f"hangwatch agent: {text}", file=sys.stderr, flush=True)


class Agent:
    """Finds jobs, attaches to each, lets each go as it ends; serves their metrics."""

    def __init__(self, cfg: AgentConfig) -> None:
        self.cfg = cfg
        self.watched: dict[tuple[int, int], Watched] = {}
        self.ended: set[tuple[int, int]] = set()  # watched once: never attached to again
        self.members: set[tuple[int, int]] = set()  # processes seen in a watched job's tree: never a job of their own
        self.shared: dict[int, bool] = {}  # uid -> its user directory carries its ACL
        # The metric families of each job under `hangwatch run` (run directory, user), as of the last read: replaced
        # whole, by a thread of its own (a run directory on a mount that hangs holds up neither a scan nor a scrape)
        self.run_families: dict[tuple[str, int], list[Any]] = {}
        self._reader: threading.Thread | None = None
        self.stop = threading.Event()
        self.server: Any = None

    def _run_dir(self, job: Found) -> Path:
        """RUNS_DIR/USER/TIME-PID-SCRIPT. Every directory is the agent's own (a user who owned one could point a
        name in it anywhere the agent writes); the job's user reads its own through an ACL (setfacl), nobody else."""
        name = next((os.path.basename(a) for a in job.argv[1:] if a.endswith(".py")), None)
        name = name or os.path.basename(job.argv[0] if job.argv else "job")
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40]
        user = self.cfg.runs_dir / _user_name(job.uid)
        user.mkdir(mode=0o700, exist_ok=True)
        if job.uid not in self.shared:
            self.shared[job.uid] = os.geteuid() == 0 and job.uid != 0 and _share(user, job.uid)
            if os.geteuid() == 0 and job.uid != 0 and not self.shared[job.uid]:
                say(f"setfacl failed: {user} is readable by root only")
        path = user / f"{stamp}-{job.pid}-{safe}"
        # with the ACL, the group bits are its mask: the job's user's entry (the owning group's entry is empty)
        path.mkdir(mode=0o750 if self.shared[job.uid] else 0o700)
        return path

    def _attach(self, job: Found) -> None:
        acts = self.cfg.act_users is None or job.uid in self.cfg.act_users
        run_dir = self._run_dir(job)
        args = [sys.executable, "-m", "hangwatch", "attach", "--run-dir", str(run_dir)]
        args += ["--on-hang", self.cfg.on_hang if acts else "report", *self.cfg.attach_args]
        if self.cfg.metrics_port is not None:
            args += ["--metrics-textfile", str(run_dir / METRICS_FILE)]
        args += ["--owner-only", "--expect-start", str(job.started), str(job.pid)]
        with open(run_dir / "hangwatch.log", "ab") as out:
            child = subprocess.Popen(  # in its run directory: no hangwatch.toml of the agent's directory applies
                args,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,
                close_fds=True,
                cwd=run_dir,
            )
        self.watched[job.key] = Watched(job, child, run_dir)
        say(f"attached to pid {job.pid} ({' '.join(redact_argv(job.argv))[:120]}): {run_dir}")

    def scan(self) -> None:
        """One round: children whose job ended are let go; new jobs are attached to."""
        for key, w in list(self.watched.items()):
            if w.child.poll() is not None:
                del self.watched[key]
                self.ended.add(key)
                say(f"pid {w.job.pid}: the watch ended (hangwatch attach exited {w.child.returncode}): {w.run_dir}")
        skip = {os.getpid(), *(w.child.pid for w in self.watched.values())}
        roots = {w.job.pid for w in self.watched.values()}
        runs: set[tuple[str, int]] = set()
        found = find_jobs(self.cfg.users, skip, self.cfg.match, self.members, roots, runs)
        for job in found:
            if job.key not in self.watched and job.key not in self.ended:
                try:
                    self._attach(job)
                except OSError as e:
                    say(f"could not attach to pid {job.pid}: {e}")
                    self.ended.add(job.key)
        if self.server is not None:  # after the attaches: a slow read holds up no new job's watch
            self._read_runs(runs)

    def run(self) -> int:
        """Until told to stop (SIGTERM, SIGINT): scan, then wait."""
        try:  # traversed by each user to its own directory, listed by root only
            self.cfg.runs_dir.mkdir(mode=0o711, parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(
                f"the runs directory {self.cfg.runs_dir} cannot be made ({e.strerror})",
                "Pass a --runs-dir it may write",
            ) from None
        if self.cfg.metrics_port is not None:
            self.server = serve_metrics(self, self.cfg.metrics_port)
        old = {s: signal.signal(s, lambda *_: self.stop.set()) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            while not self.stop.is_set():
                self.scan()
                self.stop.wait(self.cfg.scan_every)
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            self.close()
        return 0

    def close(self) -> None:
        """Every attach child detaches (SIGTERM: the job runs on); the endpoint stops."""
        for w in self.watched.values():
            with contextlib.suppress(ProcessLookupError):
                w.child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_WAIT_S
        for w in self.watched.values():
            try:
                w.child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                w.child.kill()  # a watch that does not detach: ended itself (never the job)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    w.child.wait(timeout=5)
        if self.server is not None:
            self.server.shutdown()

    def _read_runs(self, runs: set[tuple[str, int]]) -> None:
        """The families of each `hangwatch run` job, read in a thread given READ_WAIT_S; while a read still hangs, the
        last ones are kept and no other read starts."""
        if self._reader is not None and self._reader.is_alive():
            return
        match = self.cfg.match

        def read() -> None:
            try:
                summaries = {key: _read_summary(*key) for key in sorted(runs)}
                got = {
                    k: v
                    for k, v in summaries.items()
                    if v is not None and (match is None or match.search(" ".join(map(str, v.command))))
                }
                names = [os.path.basename(os.path.normpath(d)) for d, _ in got]
                out = {}
                for (d, uid), summary in got.items():
                    name = os.path.basename(os.path.normpath(d))
                    out[(d, uid)] = _run_families(summary, name if names.count(name) == 1 else d)
                self.run_families = {k: v for k, v in out.items() if v}
            except Exception as e:  # noqa: BLE001 - the metrics of `hangwatch run` jobs, never the agent's end
                say(f"the summaries of `hangwatch run` jobs could not be read: {type(e).__name__}: {e}")

        self._reader = threading.Thread(target=read, name="hangwatch-agent-runs", daemon=True)
        self._reader.start()
        self._reader.join(READ_WAIT_S)

    def metric_files(self) -> list[Path]:
        """The metrics file of each job watched now."""
        return [w.run_dir / METRICS_FILE for w in list(self.watched.values())]


class _Collector:
    """Every watched job's metrics file and every `hangwatch run` job's summary, merged by family, and the agent's
    own count of jobs by who supervises each."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily, Metric
        from prometheus_client.parser import text_string_to_metric_families

        files, runs = self.agent.metric_files(), self.agent.run_families
        jobs = GaugeMetricFamily("hangwatch_agent_jobs", "Jobs on the node, by supervisor", labels=["supervisor"])
        jobs.add_metric(["agent"], len(files))  # a `hangwatch attach` the agent started
        jobs.add_metric(["run"], len(runs))  # their own `hangwatch run`
        yield jobs
        merged: dict[str, Metric] = {}
        families: list[Any] = []
        for path in files:
            try:
                text = path.read_text()
            except OSError:
                continue  # not written yet
            families += text_string_to_metric_families(text)
        for fams in runs.values():
            families += fams
        for family in families:
            into = merged.setdefault(family.name, Metric(family.name, family.documentation, family.type))
            into.samples.extend(family.samples)
        yield from merged.values()


MAX_SUMMARY_BYTES = 1 << 20
READ_WAIT_S = 2.0  # how long a scan waits for the summaries of the `hangwatch run` jobs


def _run_families(summary: RunSummary, name: str) -> list[Any]:
    """The metric families of a `hangwatch run` job, as its own endpoint shows them (its incidents as one count,
    cause ""; the run named by its directory, node "0"); none where the summary's fields do not make metrics."""
    from hangwatch.supervise.books.metrics import RunCollector, Snapshot

    try:
        incidents = (("", "", int(summary.incidents)),) if summary.incidents else ()
        collector = RunCollector(name, "0", str(summary.host), command_name([str(a) for a in summary.command]))
        collector.snapshot = Snapshot(summary, float(summary.started_at), (), incidents)
        families = list(collector.collect())
        for family in families:
            for sample in family.samples:
                float(sample.value)  # what the exposition will write: a number
                if not all(isinstance(v, str) for v in sample.labels.values()):
                    return []
    except Exception:  # a summary.json written by hand (or by a user who means harm): left out
        log.debug("a run's metrics were left out", exc_info=True)
        return []
    return families


def _read_summary(run_dir: str, uid: int) -> RunSummary | None:
    """The summary.json of a `hangwatch run` of user ``uid`` whose supervisor still runs. A job's environment names the
    directory, so it is read only where that user owns the directory and the file, neither of them a link (the
    directory opened with O_NOFOLLOW, the file relative to it), never under /proc, never a terminal or a FIFO: the
    agent (root) reads through it no file the user does not own."""
    path = os.path.normpath(run_dir)
    if not os.path.isabs(path) or path == "/proc" or path.startswith("/proc/"):
        return None
    try:
        d = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if os.fstat(d).st_uid != uid:
            return None
        f = os.open(SUMMARY, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=d)
        try:
            st = os.fstat(f)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != uid:
                return None
            data = json.loads(os.read(f, MAX_SUMMARY_BYTES))
        finally:
            os.close(f)
        summary = RunSummary.from_dict(data) if isinstance(data, dict) else None
    except Exception:  # missing, being replaced, not a summary (JSON nested past the recursion limit)
        log.debug("a run's summary was not read", exc_info=True)
        return None
    finally:
        os.close(d)
    alive = (  # its supervisor still runs, as the job's user (or root)
        isinstance(summary.supervisor_pid, int) and proc.owner_of(summary.supervisor_pid) in (uid, 0)
        if summary
        else False
    )
    return summary if alive and summary is not None and summary.ended_at is None else None


def serve_metrics(agent: Agent, port: int) -> Any:
    """/metrics on ``port``: every job's figures in one scrape."""
    try:
        from prometheus_client import CollectorRegistry, start_http_server
    except ImportError as e:
        raise UsageError(
            "--metrics-port needs prometheus_client", "Install the extra: pip install 'hangwatch[metrics]'"
        ) from e
    registry = CollectorRegistry()
    registry.register(_Collector(agent))
    try:
        server, _ = start_http_server(port, registry=registry)
    except OSError as e:
        raise UsageError(f"--metrics-port {port} cannot be served ({e.strerror})", "Pass a free port") from None
    return server


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _share(path: Path, uid: int) -> bool:
    """``uid`` may read ``path`` and what is made in it from now on (a POSIX ACL, default entries included)."""
    try:
        r = subprocess.run(
            ["setfacl", "-m", f"u:{uid}:rX", "-d", "-m", f"u:{uid}:rX", str(path)],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0

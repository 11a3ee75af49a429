"""Test harness: start real hanging jobs, always end their whole process tree."""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

SCENARIOS = Path(__file__).parent / "scenarios"
E2E_DIR = Path(__file__).parent / "e2e"
# Every test, and every hangwatch a test starts, runs the rules strictly: a rule that raises fails
# the test, instead of a "not flagged" test passing because the rule never ran.
os.environ["HANGWATCH_STRICT_RULES"] = "1"


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile hangwatch once: hundreds of `hangwatch` processes start in this suite, and with
    PYTHONDONTWRITEBYTECODE set (as on CI machines) each would compile every module again."""
    import compileall

    import hangwatch

    compileall.compile_dir(str(Path(hangwatch.__file__).parent), quiet=1)
    # Runs started by tests go to a run index of their own, not the user's.
    import tempfile

    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="hangwatch-test-state-")


def _is_xdist_controller(session: pytest.Session) -> bool:
    return not hasattr(session.config, "workerinput") and session.config.getoption("dist", "no") != "no"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The last net: every process a test started carries this session's XDG_STATE_HOME (set above, inherited by
    hangwatch, its jobs and their workers). Whatever is still alive when the session ends (a test's own cleanup
    missed it: a worker orphaned mid-kill, a test killed by its timeout) is named and ended here, with its tree; then
    that folder (the session's run index) is removed."""
    mark = os.environ.get("XDG_STATE_HOME", "")
    if "hangwatch-test-state-" not in mark:
        return
    try:
        # the controller's mark is in its workers' environment: the processes are theirs to end
        if not _is_xdist_controller(session):
            _end_left_behind(mark)
    finally:
        shutil.rmtree(mark, ignore_errors=True)  # the session's run index goes with it


def _end_left_behind(mark: str) -> None:
    """End every process whose XDG_STATE_HOME is ``mark``, and name them on stderr."""
    left = []
    for p in psutil.process_iter():
        try:
            if p.pid != os.getpid() and p.environ().get("XDG_STATE_HOME") == mark:
                left.append(p)
        except psutil.Error:
            continue
    if not left:
        return
    names = []
    for p in left:
        try:
            names.append(f"{p.pid} {' '.join(p.cmdline())[:120]}")
            p.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(left, timeout=10)
    sys.stderr.write(
        "\nprocesses left behind by the tests, ended at the session's end:\n  " + "\n  ".join(names) + "\n"
    )


# --- tiers ---------------------------------------------------------------------------------------------------
# A test that starts a process (a job, hangwatch, torchrun, a shell) is marked ``e2e``; every other test is the
# quick tier (`pytest -m "not e2e"`), and this guard keeps it honest: a test outside e2e that starts a process
# fails, so the quick tier stays quick and needs nothing but the code.
_spawned: list[str] = []


def _watch_spawns() -> None:
    """Note every process this test process starts: subprocess and multiprocessing's exec, fork, posix_spawn."""
    import _posixsubprocess

    def watched(name: str, call: Any) -> Any:
        def spawn(*args: Any, **kwargs: Any) -> Any:
            _spawned.append(f"{name} {args[0]!r}" if args else name)
            return call(*args, **kwargs)

        return spawn

    _posixsubprocess.fork_exec = watched("exec", _posixsubprocess.fork_exec)  # type: ignore[assignment]
    subprocess._fork_exec = watched("exec", subprocess._fork_exec)  # type: ignore[attr-defined]
    for name in ("fork", "posix_spawn", "posix_spawnp"):
        setattr(os, name, watched(name, getattr(os, name)))


_watch_spawns()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/e2e/ is e2e (marked or not); the quick tier (tests/unit/) runs first, so a broken
    rule fails in the first minute of the whole suite too; then the long e2e tests (``slow``), so that with
    several workers none of them starts last and keeps the others waiting."""
    for item in items:
        if E2E_DIR in item.path.parents:
            item.add_marker(pytest.mark.e2e)
    items.sort(key=lambda item: (item.get_closest_marker("e2e") is not None, item.get_closest_marker("slow") is None))
    items[:] = worker_chunks(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def _allowed_s(item: pytest.Item) -> float:
    """How long a test may run (its own ``timeout`` mark, else the suite's 120 s): the long ones say so."""
    mark = item.get_closest_marker("timeout")
    return float(mark.args[0]) if mark is not None and mark.args else 120.0


def worker_chunks(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """The order for pytest-xdist's ``worksteal``: it hands each worker one contiguous range of the collection
    (``len // n``, then the rest split the same way) and idle workers steal from the end of the longest queue. In
    one sorted list every ``slow`` test fell in one worker's range and ran one after another there (391 s of them
    in suite run 26). Here each range gets its share of the quick tier first, then its share of the slow tests
    (the longest first, dealt back and forth), then plain e2e tests to fill it: every worker starts a long test once
    its quick ones end."""
    if workers <= 1:
        return items
    quick = [i for i in items if i.get_closest_marker("e2e") is None]
    slow = [i for i in items if i.get_closest_marker("e2e") is not None and i.get_closest_marker("slow") is not None]
    rest = [i for i in items if i.get_closest_marker("e2e") is not None and i.get_closest_marker("slow") is None]
    sizes, left = [], len(items)
    for k in range(workers):  # the scheduler's own arithmetic (xdist.scheduler.worksteal.check_schedule)
        sizes.append(left // (workers - k))
        left -= sizes[-1]
    chunks: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for n, item in enumerate(quick):
        chunks[n % workers].append(item)
    slow.sort(key=_allowed_s, reverse=True)  # the longest first, dealt back and forth: 0, 1, 2, 2, 1, 0, ...
    for n, item in enumerate(slow):
        lap, k = divmod(n, workers)
        chunks[k if lap % 2 == 0 else workers - 1 - k].append(item)
    out: list[pytest.Item] = []
    for chunk, size in zip(chunks, sizes, strict=True):
        while len(chunk) < size and rest:
            chunk.append(rest.pop(0))
        out.extend(chunk)
    return out + rest  # (a chunk over its size pushes the others: the first ranges still start as built)


@pytest.fixture(autouse=True)
def _quick_tier_starts_no_process(request: pytest.FixtureRequest) -> Iterator[None]:
    del _spawned[:]
    yield
    if request.node.get_closest_marker("e2e") is None and _spawned:
        pytest.fail(
            f"this test is not marked e2e but started a process ({_spawned[0]}): mark it "
            "@pytest.mark.e2e, or keep it free of processes",
            pytrace=False,
        )


READY_TIMEOUT_S = 90.0  # torch import + worker start on 2 busy cores
INSPECT_TIMEOUT_S = 120.0


@dataclass
class Job:
    proc: subprocess.Popen[bytes]
    ready_file: Path
    log: Path
    tmp: Path
    known: set[int] = field(default_factory=set)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def ready_pids(self) -> dict[str, int]:
        out = {}
        for line in self.ready_file.read_text().splitlines():
            tag, pid = line.split()
            out[tag] = int(pid)
        return out

    def remember_tree(self) -> None:
        """Record every descendant now: ranks and workers can outlive the root and change session."""
        try:
            self.known |= {c.pid for c in psutil.Process(self.pid).children(recursive=True)}
        except psutil.Error:
            pass
        if self.ready_file.exists():
            self.known |= set(self.ready_pids().values())


def kill_tree(job: Job, timeout_s: float = 15.0) -> None:
    """SIGKILL the job's root, everything below it, and its process group/session stragglers. The root goes first
    (a multiprocessing.Pool whose worker is killed before its main process forks a replacement), and the group and
    session are read again after each pass for a process forked meanwhile."""
    job.remember_tree()
    procs: list[psutil.Process] = []
    for _ in range(3):
        victims = ({job.pid} | job.known | _group_or_session(job.pid)) - {p.pid for p in procs} - {os.getpid()}
        if not victims:
            break
        for pid in sorted(victims, key=lambda pid: pid != job.pid):
            try:
                pr = psutil.Process(pid)
                pr.send_signal(signal.SIGKILL)
                procs.append(pr)
            except psutil.Error:
                continue
        psutil.wait_procs(procs, timeout=1.0)
        job.known = set()
    psutil.wait_procs(procs, timeout=timeout_s)
    try:
        job.proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass
    alive = [p.pid for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"processes left behind: {alive}"


def _group_or_session(leader: int) -> set[int]:
    """Every process whose process group or session ``leader`` leads."""
    out = set()
    for p in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(p.pid) == leader or os.getsid(p.pid) == leader:
                out.add(p.pid)
        except (ProcessLookupError, PermissionError, psutil.Error):
            continue
    return out


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONUNBUFFERED", "HANGWATCH_", "PYTEST_"))}
    env.update({"OMP_NUM_THREADS": "1", "PYTHONPATH": str(SCENARIOS), "HANGWATCH_STRICT_RULES": "1"})
    env.update(extra)
    return env


@pytest.fixture
def start_job(tmp_path: Path) -> Iterator[object]:
    jobs: list[Job] = []

    def _start(
        argv: list[str] | str,
        *,
        ready_count: int = 1,
        env: dict[str, str] | None = None,
        stdout_file: bool = True,
        stdin: int | None = None,
    ) -> Job:
        if isinstance(argv, str):
            argv = [sys.executable, str(SCENARIOS / argv)]
        ready = tmp_path / f"ready-{len(jobs)}"
        log = tmp_path / f"job-{len(jobs)}.log"
        e = clean_env(HW_READY=str(ready), HW_TMP=str(tmp_path), **(env or {}))
        out = open(log, "wb") if stdout_file else subprocess.DEVNULL  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=e, start_new_session=True, cwd=tmp_path, stdin=stdin
        )
        if stdout_file:
            out.close()  # type: ignore[union-attr]
        job = Job(proc, ready, log, tmp_path)
        jobs.append(job)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if ready_count <= 0 or (ready.exists() and len(ready.read_text().splitlines()) >= ready_count):
                job.remember_tree()
                return job
            if proc.poll() is not None:
                pytest.fail(f"job exited early ({proc.returncode}): {log.read_text()[-2000:] if stdout_file else ''}")
            time.sleep(0.05)
        pytest.fail(f"job never said ready within {READY_TIMEOUT_S:.0f} s")

    yield _start
    for job in jobs:
        kill_tree(job)


def run_hangwatch(
    *args: str, env: dict[str, str] | None = None, timeout: float = INSPECT_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "hangwatch", *args], capture_output=True, text=True, timeout=timeout, env=e
    )


def _record_args() -> list[str]:
    """With HW_RECORD_DIR set, save each capture's evidence as a fixture named after the test."""
    where = os.environ.get("HW_RECORD_DIR")
    test = os.environ.get("PYTEST_CURRENT_TEST", "")
    if not where or not test:
        return []
    name = test.split("::")[-1].split(" ")[0].replace("[", "-").replace("]", "").replace(".py", "")
    path = Path(where) / f"{name}.json"
    n = 2
    while path.exists():
        path, n = Path(where) / f"{name}-{n}.json", n + 1
    return ["--evidence", str(path)]


def inspect_json(pid: int, window: float = 2.0, env: dict[str, str] | None = None) -> dict:
    r = run_hangwatch("inspect", str(pid), "--window", str(window), "--json", *_record_args(), env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def torchrun(n: int, script: str, *args: str) -> list[str]:
    """The command that starts ``n`` local ranks of a scenario under torchrun, on a free port."""
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        str(n),
        "--master-port",
        str(_free_port()),
        str(SCENARIOS / script),
        *args,
    ]


def bytes_differ(got: bytes, want: bytes) -> str | None:
    """Where ``got`` differs from ``want`` (their lengths and the first differing offset with a few bytes of each), or
    None when they are the same: what a failure of a byte-for-byte check says instead of pytest's diff of megabytes."""
    if got == want:
        return None
    at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
    return f"{len(got)} bytes, not {len(want)}; first differs at {at}: {got[at : at + 40]!r} vs {want[at : at + 40]!r}"


def marker(script: str | Path, tag: str = "HANG-HERE") -> tuple[str, int]:
    """(absolute path, line) of the line carrying ``# TAG`` (exactly that tag)."""
    path = Path(script) if Path(script).is_absolute() else SCENARIOS / script
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.rstrip().endswith(f"# {tag}"):
            return str(path.resolve()), n
    raise AssertionError(f"no # {tag} in {path}")


def root_cause(incident: dict) -> dict:
    assert incident["findings"], incident
    return incident["findings"][0]


# --- `hangwatch run` end to end -------------------------------------------------------------------
RUN_TIMEOUT_S = 150.0
FAST = ["--min-stall", "1", "--startup-grace", "4", "--capture-window", "1", "--kill-grace", "2"]


def _job_processes(run_dir: Path) -> list[psutil.Process]:
    """Every process started for this run: they all carry HANGWATCH_RUN_DIR in their environment."""
    target = str(run_dir.resolve())
    out = []
    for p in psutil.process_iter():
        try:
            if p.pid != os.getpid() and p.environ().get("HANGWATCH_RUN_DIR") == target:
                out.append(p)
        except psutil.Error:
            continue
    return out


class Run:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.dir = tmp_path / "run"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, *args: str, env: dict[str, str] | None = None, stdin: int | None = None) -> subprocess.Popen[bytes]:
        cmd = [sys.executable, "-m", "hangwatch", "run", "--run-dir", str(self.dir), *args]
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.tmp,
            stdin=stdin,
            env=clean_env(**(env or {})),
            start_new_session=True,
        )
        return self.proc

    def __call__(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = RUN_TIMEOUT_S
    ) -> subprocess.CompletedProcess[bytes]:
        p = self.start(*args, env=env)
        out, err = p.communicate(timeout=timeout)
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def incident(self, n: int | None = None) -> dict:
        """The n-th incident; without n, the first that is more than a `slow` one with nothing done (on a loaded
        machine a slow start or a gap before the hang may be said first: the contract at a short --min-stall), or
        the first when every one is such."""
        if n is not None:
            return json.loads((self.dir / "incidents" / f"{n:03d}" / "incident.json").read_text())
        found = [json.loads(p.read_text()) for p in sorted((self.dir / "incidents").glob("*/incident.json"))]
        assert found, f"no incident in {self.dir}"
        return next((i for i in found if (i["verdict"], i["action"]) != ("slow", "none")), found[0])

    def touched(self) -> list[dict]:
        """The incidents that are more than a report of a wait (verdict `slow` or `waiting`, nothing done): on a
        loaded machine a healthy job at a short --min-stall may be said slow or waiting, and must be left alone."""
        found = [json.loads(p.read_text()) for p in sorted((self.dir / "incidents").glob("*/incident.json"))]
        return [i for i in found if i["verdict"] not in ("slow", "waiting") or i["action"] != "none"]

    def hang(self) -> dict:
        """The incident that declared the hang (a job may first get one for a wait: "waiting", nothing done)."""
        found = [json.loads(p.read_text()) for p in sorted((self.dir / "incidents").glob("*/incident.json"))]
        return next(i for i in found if i["verdict"] == "hung")

    def summary(self) -> dict:
        return json.loads((self.dir / "summary.json").read_text())

    def events(self) -> list[dict]:
        return [json.loads(ln) for ln in (self.dir / "events.jsonl").read_text().splitlines()]

    def cleanup(self) -> list[int]:
        left = []
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        if self.dir.exists():
            # hangwatch was SIGKILLed above if it still ran: the kernel's death signal (armed by the exec
            # shim) ends the job, which needs a moment to be scheduled and exit. Left behind is what
            # is still there after that moment.
            deadline = time.monotonic() + 3.0
            while (procs := _job_processes(self.dir)) and time.monotonic() < deadline:
                time.sleep(0.1)
            left = [p.pid for p in procs]
            for p in procs:
                p.kill()
            psutil.wait_procs(procs, timeout=10)
        return left


@pytest.fixture
def run(tmp_path):
    r = Run(tmp_path)
    yield r
    left = r.cleanup()
    assert not left, f"hangwatch left job processes behind: {left}"


def only_slow_incidents(run: Run) -> list[dict]:
    """The run's incidents, asserting that none is a hang: a job alive without progress past 3 x
    --min-stall gets a `slow` incident (nothing done to it), never more. Returns them."""
    incidents = [run.incident(n) for n in range(1, run.summary()["incidents"] + 1)]
    assert all((i["verdict"], i["action"]) == ("slow", "none") for i in incidents), [
        (i["verdict"], i["action"], i["findings"][0]["cause"]) for i in incidents
    ]
    return incidents


def wait_for_event(run: Run, kind: str, timeout: float = 60.0) -> dict:
    """Block (bounded) until the run's events.jsonl holds an event of ``kind``; return it."""
    deadline = time.monotonic() + timeout
    path = run.dir / "events.jsonl"
    while time.monotonic() < deadline:
        if path.exists():
            for line in path.read_text().splitlines():
                event = json.loads(line)
                if event["event"] == kind:
                    return event
        time.sleep(0.05)
    raise AssertionError(f"no {kind!r} event within {timeout:.0f} s")


def py(script: str, *args: str) -> list[str]:
    return ["--", sys.executable, str(SCENARIOS / script), *args]


# Ports the tests hand to jobs: below the kernel's ephemeral range (32768-60999 by default), so that no bind to port 0
# and no outgoing connection (gloo's pairs, a store's clients) can take one between the test's pick and the job's
# bind; and each pytest-xdist worker has its own slice, handed out once per session, so two tests never share one.
PORTS = (20000, 32000)  # shared out among the workers: six get 2,000 each
_next_port: dict[str, int] = {}


def _bindable(port: int) -> bool:
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False


def free_ports(count: int = 1) -> int:
    """The first of ``count`` consecutive TCP ports that are free on 127.0.0.1 and this worker's alone."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    size = (PORTS[1] - PORTS[0]) // workers
    low = PORTS[0] + (index % workers) * size
    port = _next_port.get(worker, low + os.getpid() % (size // 3))
    for _ in range(size):
        if port + count > low + size:
            port = low
        if all(_bindable(port + k) for k in range(count)):
            _next_port[worker] = port + count
            return port
        port += 1
    raise RuntimeError("no free port in this test worker's slice")


def _free_port() -> int:
    return free_ports(1)


def two_free_ports() -> int:
    """A port P with P+1 also free (the job's master port and hangwatch's store next to it)."""
    return free_ports(2)


def run_in_terminal(run: Run, cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 60.0) -> bytes:
    """Run ``cmd`` (a hangwatch command) with a pseudo-terminal as its stdin/stdout/stderr, draining
    the terminal so it never blocks; the bytes the terminal received. ``run.proc`` is set for cleanup."""
    import pty

    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True)
    os.close(slave)
    run.proc = p
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed
            break
        if not chunk:
            break
        seen += chunk
    p.wait(timeout=30)
    os.close(master)
    return seen


_HOOK_COPIES = itertools.count()


@pytest.fixture(scope="module")
def hook() -> Any:
    """The job's startup hook (the package hangwatch/_autobeat/_hangwatch_hook that sitecustomize.py installs), loaded
    as a package of its own for each test module (its class-level state stays there), with nothing installed: one
    namespace holding every room's names (``hook._LoaderTasks``, ``hook._Healer``, ...)."""
    from hangwatch.supervise.job.autobeat import AUTOBEAT_DIR

    rooms = AUTOBEAT_DIR / "_hangwatch_hook"
    name = f"hangwatch_hook_under_test_{next(_HOOK_COPIES)}"
    env = os.environ.pop("HANGWATCH_HEARTBEAT_DIR", None)  # the hook installs nothing without it
    try:
        spec = importlib.util.spec_from_file_location(
            name, rooms / "__init__.py", submodule_search_locations=[str(rooms)]
        )
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
        names: dict[str, Any] = {}
        for room in sorted(rooms.glob("*.py")):
            module = importlib.import_module(f"{name}.{room.stem}") if room.stem != "__init__" else package
            names.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
        return types.SimpleNamespace(**names)
    finally:
        if env is not None:
            os.environ["HANGWATCH_HEARTBEAT_DIR"] = env


def kcmp_says() -> bool:
    """Whether this kernel says which processes share an open file (kcmp(2); a seccomp filter may block it): the
    proofs on a timerfd or an epoll only its waiter holds need it."""
    from hangwatch.capture.anonfds import same_file

    r, w = os.pipe()
    try:
        return same_file(os.getpid(), r, os.getpid(), r) is True
    finally:
        os.close(r)
        os.close(w)

"""The hang zoo: reproductions of real, publicly reported hangs (and healthy look-alikes), each run under
hangwatch and scored in one table.

Each case is a script in bench/zoo/ whose docstring says which public report it reproduces (``report:``),
what the reporter saw, the mechanism, and what hangwatch should say (``expect: hung CAUSE``,
``expect: waiting CAUSE``, ``expect: stopped CAUSE`` or ``expect: healthy``; ``accept:`` other causes that are
also right). ``# HANG-HERE`` comments mark the lines a hang may be named at (either side of a mismatch). A
case calls ``_zoo.ready()`` when its hang (or a look-alike's silent phase) starts: detection latency is
measured from there.

Modes:
  run      ``hangwatch run --on-hang kill --min-stall 5 -- python CASE``: a hang must be named right (cause and
           line) and the job ended; a look-alike must finish by itself (exit 0) with no hung incident;
           ``waiting`` must be reported as waiting, not killed.
  inspect  the case started alone; once it is ready (+2 s), ``hangwatch inspect PID --window 3 --json``.
  defaults ``hangwatch run --on-hang kill`` with no other flag (slower: ``--defaults`` adds it).
  replay   ``--replay DIR``: no job started; the captures an inspect run kept (``--evidence DIR``) diagnosed again
           and scored as inspect's are (a change to the diagnosis, checked on the whole zoo in seconds).

    python bench/zoo.py [--only a,b] [--mode run,inspect] [--defaults] [--parallel 2] [--json FILE]
    python bench/zoo.py --mode inspect --evidence DIR; python bench/zoo.py --replay DIR
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
ZOO = ROOT / "bench" / "zoo"
READY_TIMEOUT_S = 120.0
HANG_TIMEOUT_S = {"run": 150.0, "defaults": 420.0}


@dataclass(frozen=True)
class Case:
    """One case, from its file and its header."""

    name: str
    path: Path
    title: str
    report: str
    also: tuple[str, ...]
    saw: str
    expect: str  # hung | waiting | healthy
    cause: str | None
    accept: tuple[str, ...]
    where: tuple[tuple[str, int], ...]  # (file name, line) the hang may be named at: any of them (ranks in
    # different collectives: either side; both sides of a lock cycle)
    stdin: str  # "pipe" (held by the runner, never written) or "tty" (a terminal nobody types at)
    env: dict[str, str]
    where_in: tuple[tuple[str, int, str], ...] = ()  # lines marked for one kind of look only: "inspect" (no
    # recorder: where the ranks wait) or "run" (the recorder: where they went different ways)
    output: str = "none"  # under inspect: "none" (thrown away) or "file" (a log file, as under nohup, a look reads)

    @property
    def healthy(self) -> bool:
        return self.expect == "healthy"


@dataclass
class Result:
    """What hangwatch said about a case in one mode."""

    case: str
    mode: str
    report: str
    expected: str
    verdict: str | None = None
    cause: str | None = None
    where: str | None = None
    latency_s: float | None = None
    ok: bool = False
    note: str = ""
    seconds: float = 0.0
    acted: bool = False  # hangwatch ended the job
    extra: dict[str, object] = field(default_factory=dict)


def parse_case(path: Path) -> Case:
    """A case's header (its docstring) and marker."""
    text = path.read_text()
    m = re.match(r'\s*"""(.*?)"""', text, re.S)
    if m is None:
        raise SystemExit(f"{path.name}: no docstring header")
    lines = m.group(1).strip().splitlines()
    keys: dict[str, list[str]] = {}
    for line in lines[1:]:
        km = re.match(r"^(\w+): (.*)$", line.strip())
        if km:
            keys.setdefault(km.group(1), []).append(km.group(2).strip())
    expect = keys["expect"][0].split()
    where_file = keys.get("where", [path.name])[0]
    marked = [
        (n, re.search(r"# HANG-HERE(?:\((\w+)\))?", line))
        for n, line in enumerate((path.parent / where_file).read_text().splitlines(), 1)
    ]
    where = tuple((where_file, n) for n, m in marked if m is not None and m.group(1) is None)
    where_in = tuple((where_file, n, m.group(1)) for n, m in marked if m is not None and m.group(1) is not None)
    env = dict(kv.split("=", 1) for kv in keys.get("env", []))
    return Case(
        path.stem,
        path,
        lines[0].strip(),
        keys["report"][0],
        tuple(keys.get("also", ())),
        keys.get("saw", [""])[0],
        expect[0],
        expect[1] if len(expect) > 1 else None,
        tuple(a.strip() for a in ",".join(keys.get("accept", [])).split(",") if a.strip()),
        where,
        keys.get("stdin", ["pipe"])[0],
        env,
        where_in,
        keys.get("output", ["none"])[0],
    )


def cases(only: list[str] | None = None) -> list[Case]:
    """Every case in bench/zoo (or the ``only`` ones), hangs first, then look-alikes."""
    found = [parse_case(p) for p in sorted(ZOO.glob("*.py")) if not p.name.startswith("_")]
    if only:
        missing = set(only) - {c.name for c in found}
        if missing:
            raise SystemExit(f"no such case: {', '.join(sorted(missing))}")
        found = [c for c in found if c.name in only]
    return sorted(found, key=lambda c: (c.healthy, c.name))


def _env(ready: Path, case: Case) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HANGWATCH_", "ZOO_READY"))}
    path = os.pathsep.join(filter(None, [str(ZOO), env.get("PYTHONPATH")]))
    env.update(ZOO_READY=str(ready), TMPDIR=str(ready.parent), PYTHONPATH=path, PYTHONUNBUFFERED="1")
    for k, v in case.env.items():
        if v:
            env[k] = v
        else:
            env.pop(k, None)
    return env


class Tree:
    """Every process a case started, remembered as it runs, so all of them can be ended (by PID)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, float] = {}
        self.remember()

    def remember(self) -> None:
        try:
            p = psutil.Process(self.root)
            for q in [p, *p.children(recursive=True)]:
                self.seen.setdefault(q.pid, q.create_time())
        except psutil.Error:
            pass

    def kill(self) -> None:
        self.remember()
        try:  # the case's own process group (each starts a session): a helper it backgrounded, orphaned since
            os.killpg(self.root, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid, created in self.seen.items():
            try:
                q = psutil.Process(pid)
                if abs(q.create_time() - created) < 0.01:
                    q.send_signal(signal.SIGCONT)
                    q.kill()
            except psutil.Error:
                continue


def _start(case: Case, argv: list[str], env: dict[str, str], tmp: Path) -> tuple[subprocess.Popen[bytes], int | None]:
    """A case's command started with its standard input: a pipe the runner holds and never writes, or (``stdin: tty``)
    a terminal whose master the runner holds, returned with it, where nobody types. Its output is thrown away, or
    (``output: file``, under ``run`` its output goes through hangwatch anyway) written to a log file, as under nohup."""
    stdin, terminal = subprocess.PIPE, None
    if case.stdin == "tty":
        terminal, stdin = pty.openpty()
    out = open(tmp / "output.log", "wb") if case.output == "file" else subprocess.DEVNULL  # noqa: SIM115
    try:
        p = subprocess.Popen(argv, env=env, stdin=stdin, stdout=out, stderr=out, start_new_session=True, cwd=tmp)
    finally:
        if out != subprocess.DEVNULL:
            out.close()  # the job holds its own copy
    if terminal is not None:
        os.close(stdin)  # the job holds its end
    return p, terminal


def _end(p: subprocess.Popen[bytes], tree: Tree, terminal: int | None) -> None:
    """End every process the case started (by PID), then its terminal."""
    tree.kill()
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    if terminal is not None:
        os.close(terminal)


def _ready_at(ready: Path) -> float | None:
    try:
        first = ready.read_text().splitlines()[0]
        return float(first.split()[0])
    except (OSError, IndexError, ValueError):
        return None


def _where_text(where: dict[str, object] | None) -> str | None:
    if not where or not where.get("file"):
        return None
    return f"{Path(str(where['file'])).name}:{where.get('line')}"


def _judge(case: Case, r: Result, findings_root: dict[str, object] | None) -> None:
    """Whether what was found is what the case expects."""
    if case.healthy:
        r.ok = r.verdict != "hung" and not r.acted
        if not r.ok:
            r.note = r.note or "a healthy job was declared hung"
        return
    causes = {case.cause, *case.accept}
    named = r.cause in causes
    right_verdict = r.verdict == case.expect
    at_line = True
    kind = "inspect" if r.mode in ("inspect", "replay") else "run"
    lines = {f"{f}:{n}" for f, n in case.where} | {f"{f}:{n}" for f, n, k in case.where_in if k == kind}
    if lines and findings_root is not None and r.cause == case.cause:
        at_line = r.where in lines
    r.ok = bool(named and right_verdict and at_line)
    if not r.ok and not r.note:
        r.note = (
            "wrong cause"
            if not named
            else "wrong verdict"
            if not right_verdict
            else f"named at {r.where}, expected {' or '.join(sorted(lines))}"
            if lines
            else ""
        )
    if not r.ok and findings_root is not None:  # what the finding saw: a failure in CI explains itself
        seen = findings_root.get("evidence") or []
        r.note += " | evidence: " + "; ".join(str(e)[:160] for e in list(seen)[:4])  # type: ignore[call-overload]


def run_mode(case: Case, mode: str, tmp: Path) -> Result:
    """The case under `hangwatch run --on-hang kill` (with --min-stall 5 unless mode is `defaults`)."""
    r = Result(case.name, mode, case.report, f"{case.expect} {case.cause or ''}".strip())
    ready, run_dir = tmp / "ready", tmp / "run"
    args = [sys.executable, "-m", "hangwatch", "run", "--run-dir", str(run_dir), "--on-hang", "kill"]
    if mode == "run":
        args += ["--min-stall", "5"]
    args += ["--", sys.executable, str(case.path)]
    t0 = time.time()
    bound = HANG_TIMEOUT_S[mode] + (400.0 if case.healthy else 0.0)
    p, terminal = _start(case, args, _env(ready, case), tmp)
    tree = Tree(p.pid)
    incident: dict[str, object] | None = None
    try:
        while time.time() - t0 < bound and p.poll() is None:
            tree.remember()
            if case.expect == "waiting":
                incident = _first_incident(run_dir, ("waiting", "hung"))
                if incident is not None:
                    break
            time.sleep(0.5)
        code = p.poll()
        if code is None and incident is None:
            r.note = f"no verdict within {bound:.0f} s"
    finally:
        _end(p, tree, terminal)
    r.seconds = round(time.time() - t0, 1)
    code = p.returncode
    if incident is None:
        incident = _first_incident(run_dir, ("hung", "stopped")) or _first_incident(
            run_dir, ("waiting", "slow", "crashed")
        )
    summary = _read_json(run_dir / "summary.json") or {}
    r.acted = any(e.get("event") == "action" and e.get("action") in ("killed", "restarted") for e in _events(run_dir))
    if case.healthy and code != 0 and not r.note:
        r.note = f"exit {code}"
    root = _root(incident)
    if incident is not None:
        r.verdict = str(incident.get("verdict"))
        r.cause = str(root.get("cause")) if root else None
        r.where = _where_text(root.get("where") if root else None)  # type: ignore[arg-type]
        at, detected = _ready_at(ready), incident.get("detected_at")
        if at is not None and isinstance(detected, (int, float)):
            r.latency_s = round(float(detected) - at, 1)
    r.extra = {"exit_code": code, "exit_reason": summary.get("exit_reason")}
    _judge(case, r, root)
    if case.healthy and code != 0:
        r.ok = False
    return r


def inspect_mode(case: Case, tmp: Path, evidence: Path | None = None) -> Result:
    """The case started alone, inspected once it is ready (its hang, or its silent phase); with ``evidence``, the
    capture is kept there as CASE.json (``--replay`` diagnoses it again)."""
    r = Result(case.name, "inspect", case.report, f"{case.expect} {case.cause or ''}".strip())
    ready = tmp / "ready"
    t0 = time.time()
    p, terminal = _start(case, [sys.executable, str(case.path)], _env(ready, case), tmp)
    tree = Tree(p.pid)
    try:
        while time.time() - t0 < READY_TIMEOUT_S and _ready_at(ready) is None and p.poll() is None:
            tree.remember()
            time.sleep(0.2)
        if _ready_at(ready) is None:
            r.note = f"never ready (exit {p.poll()})"
            return r
        time.sleep(2.0)
        tree.remember()
        out = subprocess.run(
            [sys.executable, "-m", "hangwatch", "inspect", str(p.pid), "--window", "3", "--json"]
            + (["--evidence", str(evidence / f"{case.name}.json")] if evidence is not None else []),
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            env=_env(tmp / "unused", case),
        )
        (tmp / "inspect.json").write_text(out.stdout)  # read after a failure (ZOO_KEEP=failed keeps it)
        try:
            incident = json.loads(out.stdout)
        except ValueError:
            r.note = f"inspect failed: {out.stderr.strip()[-200:]}"
            return r
        root = _root(incident)
        r.verdict = str(incident.get("verdict"))
        r.cause = str(root.get("cause")) if root else None
        r.where = _where_text(root.get("where") if root else None)  # type: ignore[arg-type]
        if case.expect == "waiting" and r.verdict in ("waiting", "hung"):
            r.verdict = "waiting"  # inspect has no clock: waiting at setup is the verdict
        _judge(case, r, root)
    finally:
        _end(p, tree, terminal)
        r.seconds = round(time.time() - t0, 1)
    return r


def _read_json(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _events(run_dir: Path) -> list[dict[str, object]]:
    try:
        return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return []


def _first_incident(run_dir: Path, verdicts: tuple[str, ...]) -> dict[str, object] | None:
    for path in sorted((run_dir / "incidents").glob("*/incident.json")):
        data = _read_json(path)
        if data is not None and data.get("verdict") in verdicts:
            return data
    return None


def _root(incident: dict[str, object] | None) -> dict[str, object] | None:
    findings = incident.get("findings") if incident else None
    return findings[0] if isinstance(findings, list) and findings and isinstance(findings[0], dict) else None


def replay_mode(case: Case, evidence: Path) -> Result:
    """The case's capture kept by an earlier inspect (``--evidence``) diagnosed again, no job started, and scored as
    inspect's is: a change to the diagnosis replays the whole zoo in seconds, before and after."""
    from hangwatch.diagnose import diagnose
    from hangwatch.evidence_io import evidence_from_dict

    r = Result(case.name, "replay", case.report, f"{case.expect} {case.cause or ''}".strip())
    path = evidence / f"{case.name}.json"
    if not path.is_file():
        r.note = f"no capture kept at {path}"
        return r
    d = diagnose(evidence_from_dict(json.loads(path.read_text())))
    root = d.root.to_dict()
    r.verdict, r.cause, r.where = d.verdict.value, str(root["cause"]), _where_text(root.get("where"))
    if case.expect == "waiting" and r.verdict in ("waiting", "hung"):
        r.verdict = "waiting"  # as inspect: no clock
    _judge(case, r, root)
    return r


def run_case(case: Case, mode: str, evidence: Path | None = None) -> Result:
    """One case in one mode, in a scratch directory of its own."""
    if mode == "replay" and evidence is not None:
        return replay_mode(case, evidence)
    tmp = Path(tempfile.mkdtemp(prefix=f"zoo-{case.name}-"))
    result: Result | None = None
    try:
        result = inspect_mode(case, tmp, evidence) if mode == "inspect" else run_mode(case, mode, tmp)
        return result
    finally:
        keep = os.environ.get("ZOO_KEEP")  # 1: every case's scratch directory; failed: a failed case's only
        if keep and (keep != "failed" or result is None or not result.ok):
            print(f"zoo: kept {tmp} ({case.name}, {mode})", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def table(results: list[Result], by_case: dict[str, Case]) -> str:
    """The results as one text table, then the summary lines."""
    rows = [("case", "mode", "expected", "found", "latency", "", "report")]
    for r in results:
        found = " ".join(x for x in (r.verdict or "-", r.cause or "", f"at {r.where}" if r.where else "") if x)
        lat = f"{r.latency_s:.1f} s" if r.latency_s is not None else "-"
        mark = "ok" if r.ok else f"FAIL {r.note}".strip()
        rows.append((r.case, r.mode, r.expected, found, lat, mark, by_case[r.case].report.replace("https://", "")))
    widths = [min(max(len(row[i]) for row in rows), 60) for i in range(len(rows[0]))]
    out = ["  ".join(cell[:60].ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    out.append("")
    out.extend(summary(results, by_case))
    return "\n".join(out)


def summary(results: list[Result], by_case: dict[str, Case]) -> list[str]:
    """Named right per mode, look-alikes untouched, latency."""
    lines = []
    for mode in dict.fromkeys(r.mode for r in results):
        hangs = [r for r in results if r.mode == mode and not by_case[r.case].healthy]
        likes = [r for r in results if r.mode == mode and by_case[r.case].healthy]
        lat = sorted(
            r.latency_s for r in hangs if r.ok and r.latency_s is not None and by_case[r.case].expect == "hung"
        )
        line = (
            f"{mode}: hangs named right {sum(r.ok for r in hangs)}/{len(hangs)}; "
            f"look-alikes untouched {sum(r.ok for r in likes)}/{len(likes)}"
        )
        if lat:
            line += f"; detection latency p50 {statistics.median(lat):.1f} s, max {max(lat):.1f} s"
        lines.append(line)
    return lines


def markdown(results: list[Result], by_case: dict[str, Case], header: str) -> str:
    """The docs page (docs/zoo.md): the figures, then one row per case and mode, failures marked."""
    out = [
        header,
        "",
        *(f"- {line}" for line in summary(results, by_case)),
        "",
        "| case | report | expected | mode | found | latency | |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in sorted(results, key=lambda r: (by_case[r.case].healthy, r.case, r.mode)):
        c = by_case[r.case]
        found = " ".join(
            x for x in (r.verdict or "-", f"`{r.cause}`" if r.cause else "", f"at {r.where}" if r.where else "") if x
        )
        link = f"[{c.report.replace('https://github.com/', '')}]({c.report})"
        lat = f"{r.latency_s:.1f} s" if r.latency_s is not None else ""
        mark = "ok" if r.ok else f"**fails**: {r.note}" if r.note else "**fails**"
        out.append(f"| `{c.name}` | {link} | {r.expected} | {r.mode} | {found} | {lat} | {mark} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--mode", default="run,inspect", help="run, inspect (comma-separated)")
    ap.add_argument("--defaults", action="store_true", help="also hangwatch run --on-hang kill with no other flag")
    ap.add_argument("--parallel", type=int, default=2, help="cases at once (this machine: 2 cores)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--list", action="store_true", help="list the cases and their reports, run nothing")
    ap.add_argument("--markdown", help="also write the table as Markdown here (docs/zoo.md's table)")
    ap.add_argument("--evidence", help="inspect: keep each case's capture in this folder (CASE.json)")
    ap.add_argument("--replay", help="start nothing: diagnose the captures kept in this folder again, and score them")
    a = ap.parse_args(argv)
    if a.evidence:
        Path(a.evidence).mkdir(parents=True, exist_ok=True)
    chosen = cases(a.only.split(",") if a.only else None)
    by_case = {c.name: c for c in chosen}
    if a.list:
        for c in chosen:
            print(f"{c.name:34} {c.expect:8} {c.cause or '':32} {c.report}")
        print(f"{sum(not c.healthy for c in chosen)} hangs, {sum(c.healthy for c in chosen)} look-alikes")
        return 0
    modes = ["replay"] if a.replay else [m for m in a.mode.split(",") if m] + (["defaults"] if a.defaults else [])
    kept = Path(a.replay or a.evidence) if a.replay or a.evidence else None
    jobs = [(c, m) for m in modes for c in chosen]
    t0 = time.time()
    with ThreadPoolExecutor(max_workers=1 if a.replay else max(1, a.parallel)) as pool:
        results = list(pool.map(lambda cm: run_case(*cm, kept), jobs))
    import torch

    head = (
        f"hang zoo, {time.strftime('%Y-%m-%d')}: torch {torch.__version__}, Python {sys.version.split()[0]}, "
        f"{len(chosen)} cases, {time.time() - t0:.0f} s"
    )
    print(head + "\n")
    print(table(results, by_case))
    if a.markdown:
        Path(a.markdown).write_text(markdown(results, by_case, f"Run: {head}."))
    if a.json:
        Path(a.json).write_text(
            json.dumps(
                {
                    "date": time.strftime("%Y-%m-%d"),
                    "torch": torch.__version__,
                    "results": [asdict(r) for r in results],
                },
                indent=1,
            )
        )
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

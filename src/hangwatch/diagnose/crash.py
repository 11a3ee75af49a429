"""A job that exited with an error: name the cause from its output and what the system says.

Texts are the ones PyTorch, gloo and NCCL print (docs/facts.md#texts-a-failing-job-prints,
measured on torch 2.13). Evidence in: exit status, the tail of output.log, OOM kills counted by the cgroup.
"""

from __future__ import annotations

import dataclasses
import re
import signal

from hangwatch import signatures as sg
from hangwatch.causes import Cause
from hangwatch.diagnose.raised import Raised, first_cause
from hangwatch.fixes import (
    BATCH_LOST_FIX,
    BDB_QUIT_FIX,
    CUDA_FORK_FIX,
    CUDA_OOM_FIX,
    GPU_FIX,
    OOM_FIX,
    PEER_FIX,
    RENDEZVOUS_FIX,
    SHM_FIX,
    WORKER_DIED_FIX,
)
from hangwatch.records.evidence import Evidence
from hangwatch.records.gpu import KernelEvent
from hangwatch.records.incident import Finding, Where
from hangwatch.records.values import frozen


@frozen
class CrashPattern:
    """A text a crashed job prints, and the finding it means."""

    cause: Cause
    regex: re.Pattern[str]
    confidence: float
    summary: str
    fix: tuple[str, ...]


PATTERNS: tuple[CrashPattern, ...] = (
    CrashPattern(
        Cause.DATALOADER_WORKER_DIED,
        re.compile(r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal: Bus error"),
        0.9,
        "A DataLoader worker (pid {pid}) died of a bus error: shared memory (/dev/shm) ran out.",
        SHM_FIX,
    ),
    CrashPattern(
        Cause.DATALOADER_WORKER_DIED,
        re.compile(r"unable to (?:write to|allocate shared memory\(shm\) for) file </torch_[^>]*>"),
        0.85,
        "A DataLoader worker could not allocate shared memory (/dev/shm is full).",
        SHM_FIX,
    ),
    CrashPattern(
        Cause.DATALOADER_WORKER_DIED,
        re.compile(r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal: Killed"),
        0.85,
        "A DataLoader worker (pid {pid}) was killed by SIGKILL, usually the out-of-memory killer.",
        WORKER_DIED_FIX + OOM_FIX,
    ),
    CrashPattern(
        Cause.DATALOADER_WORKER_DIED,
        re.compile(
            r"DataLoader worker \(pid[s()]* (?P<pid>[\d, ]+)\)? "
            r"(?:is killed by signal: (?P<sig>[\w ]+)|exited unexpectedly)"
        ),
        0.8,
        "DataLoader worker pid(s) {pid} died.",
        WORKER_DIED_FIX,
    ),
    # The worker died while handing over a batch's shared-memory file descriptor (seen under load with
    # a worker SIGKILLed: the main process's fd transfer from it is reset).
    CrashPattern(
        Cause.DATALOADER_WORKER_DIED,
        re.compile(
            r"(?s)in rebuild_storage_fd.*?resource_sharer\.py.*?"
            r"(?:ConnectionResetError|ConnectionRefusedError|EOFError)"
        ),
        0.75,
        "A DataLoader worker died while handing a batch to the main process (its shared-memory file "
        "descriptor transfer was cut).",
        WORKER_DIED_FIX + OOM_FIX,
    ),
    # Measured on an H200 (tests/fixtures/gpu/h200/fork-after-cuda-output.log): a forked DataLoader worker
    # touching CUDA raises at once; the main process raises it again as "Caught RuntimeError in DataLoader worker".
    CrashPattern(
        Cause.FORK_AFTER_CUDA,
        re.compile(r"Cannot re-initialize CUDA in forked subprocess"),
        0.9,
        "A forked process (a DataLoader worker) used CUDA after its parent had started it: CUDA cannot run "
        "in a child made by fork, so the worker raised and the job stopped.",
        CUDA_FORK_FIX,
    ),
    CrashPattern(
        Cause.DISTRIBUTED_PEER_STUCK,
        re.compile(r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>\w+)"),
        0.85,
        "NCCL's watchdog timed out in {op} (sequence number {seq}): a rank stopped calling collectives.",
        PEER_FIX,
    ),
    CrashPattern(
        Cause.DISTRIBUTED_PEER_STUCK,
        re.compile(r"Timed out waiting (?P<ms>\d+)ms for (?:recv|send) operation to complete"),
        0.8,
        "A gloo collective timed out after {ms} ms: a peer rank never reached it.",
        PEER_FIX,
    ),
    CrashPattern(
        Cause.DISTRIBUTED_PEER_STUCK,
        re.compile(r"Connection closed by peer|remote worker crashing|Connection reset by peer.*gloo"),
        0.75,
        "A peer rank went away in the middle of a collective (it crashed or was killed).",
        PEER_FIX,
    ),
    CrashPattern(
        Cause.DISTRIBUTED_PEER_STUCK,
        re.compile(r"Detected mismatch between collectives on ranks"),
        0.9,
        "Ranks called different collectives (TORCH_DISTRIBUTED_DEBUG=DETAIL caught the mismatch).",
        PEER_FIX,
    ),
    CrashPattern(
        Cause.DISTRIBUTED_RENDEZVOUS_WAIT,
        re.compile(
            r"DistStoreError: Timed out after (?P<s>\d+) seconds waiting for clients\. (?P<n>\d+/\d+) clients joined"
        ),
        0.9,
        "Rendezvous timed out after {s} s with {n} ranks joined: some ranks never started.",
        RENDEZVOUS_FIX,
    ),
    CrashPattern(
        Cause.DATALOADER_BATCH_LOST,
        re.compile(r"DataLoader timed out after (?P<s>[\d.]+) seconds"),
        0.6,
        "The DataLoader's own timeout fired after {s} s: a batch never arrived (stuck worker or lost batch).",
        BATCH_LOST_FIX,
    ),
    CrashPattern(
        Cause.MEMORY_OOM,
        re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory"),
        0.85,
        "The GPU ran out of memory.",
        CUDA_OOM_FIX,
    ),
    # Not every CUDA error is the GPU's: a device-side assert is the job's own bug (an index out of range in a kernel:
    # labels past the classes, a token id past the embedding), raised at its line; an NCCL error is a peer's or the
    # network's (ncclRemoteError). Both are left to the first raise the log shows, at its line.
    CrashPattern(
        Cause.GPU_FAULT,
        re.compile(
            r"(?P<err>CUDA error: (?!out of memory|device-side assert)[^\n]+|GPU has fallen off the bus|Xid \d+"
            r"|HIP error[^\n]*|hipError\w*)"
        ),
        0.75,
        "The GPU or its driver failed: {err}",
        GPU_FIX,
    ),
    # pdb at end of input quits with BdbQuit: a breakpoint() in a process whose stdin is no terminal (multiprocessing
    # points its children's, DataLoader workers' too, at /dev/null; nohup and batch jobs give main /dev/null)
    CrashPattern(
        Cause.PROCESS_WAITS_FOR_INPUT,
        re.compile(r"bdb\.BdbQuit: Caught BdbQuit in DataLoader worker process (?P<n>\d+)"),
        0.85,
        "A breakpoint() in DataLoader worker {n} stopped the job: a worker's standard input is /dev/null "
        "(multiprocessing gives its children no terminal), so pdb read the end of input at once and quit with BdbQuit.",
        BDB_QUIT_FIX,
    ),
    CrashPattern(
        Cause.PROCESS_WAITS_FOR_INPUT,
        re.compile(r"bdb\.BdbQuit"),
        0.8,
        "The debugger ended the job (BdbQuit): a breakpoint() whose prompt was quit (q, Ctrl-D), or one where no one "
        "could answer it, its standard input no terminal (nohup, a batch job, a multiprocessing child), so pdb read "
        "the end of input at once.",
        BDB_QUIT_FIX,
    ),
)


def _kernel_findings(kernel: tuple[KernelEvent, ...], pid: int | None, known_pids: tuple[int, ...]) -> list[Finding]:
    """What the kernel log says about the crash: an Xid, an OOM kill's victim, an NFS server gone."""
    if not kernel:
        return []
    from hangwatch.diagnose.gpu import kernel_rule
    from hangwatch.diagnose.scene import Scene

    ev = Evidence(
        target_pid=pid or 0,
        root_pid=pid or 0,
        started_at=0.0,
        ended_at=0.0,
        clock_ticks=100,
        cpu_count=1,
        processes=(),
        kernel=kernel,
        known_pids=(*((pid,) if pid else ()), *known_pids),
    )
    return [h.finding for h in kernel_rule(Scene(ev, []))]


def _signal_name(code: int) -> str | None:
    return sg.signal_name(-code) if code < 0 else None


DEATH_BEFORE_EXIT_S = 30.0  # a dead worker the iterator raised about this long before the exit (caught, or not)


def _deadly(deaths: tuple[dict[str, object], ...], ended_at: float | None) -> list[dict[str, object]]:
    """The records of the error the job died of: one its unhandled error wrote, else one its iterator raised just
    before the exit (an error the job caught and lived on after is no cause of a later crash)."""
    return [d for d in deaths if d.get("unhandled") is True] or [
        d
        for d in deaths
        if ended_at is not None and isinstance(at := d.get("at"), int | float) and ended_at - at <= DEATH_BEFORE_EXIT_S
    ]


def _dead_workers(death: dict[str, object], where: Where | None) -> list[Finding]:
    """A DataLoader iterator that raised with workers of it dead, as its main process recorded them."""
    workers = death.get("workers")
    if not isinstance(workers, list):
        return []
    dead = [(w[0], w[1]) for w in workers if isinstance(w, list) and len(w) == 2 and all(isinstance(x, int) for x in w)]
    if not dead:
        return []
    wpid, code = dead[0]
    how = f"was killed by {_signal_name(code)}" if code < 0 else f"exited with status {code}"
    error = death.get("error")
    then = f"; the main process's DataLoader then raised {error}" if isinstance(error, str) else ""
    killed = code == -signal.SIGKILL
    said = f"A DataLoader worker (pid {wpid}) {how}{then}." + (
        " SIGKILL is usually the out-of-memory killer." if killed else ""
    )
    facts = tuple(
        f"the main process (pid {death.get('pid')}) saw DataLoader worker pid {p} "
        + (f"killed by {_signal_name(c)}" if c < 0 else f"exit with status {c}")
        + " (recorded by the startup hook)"
        for p, c in dead
    )
    return [
        Finding(Cause.DATALOADER_WORKER_DIED, 0.9, said, where, facts, WORKER_DIED_FIX + (OOM_FIX if killed else ()))
    ]


def diagnose_crash(
    exit_code: int,
    output_tail: str,
    oom_kills: int = 0,
    pid: int | None = None,
    kernel: tuple[KernelEvent, ...] = (),
    known_pids: tuple[int, ...] = (),
    worker_deaths: tuple[dict[str, object], ...] = (),
    ended_at: float | None = None,
) -> list[Finding]:
    """Findings for a job that exited with ``exit_code`` (negative: killed by that signal), from its
    output, the cgroup's OOM counter, the kernel log since the attempt started, and the DataLoader workers its
    main process saw dead when its iterator raised (``worker_deaths``: the startup hook's records)."""
    findings: list[Finding] = _kernel_findings(kernel, pid, known_pids)
    where = Where(pid=pid, rank=None, tid=None, file=None, line=None, function=None) if pid else None
    for death in _deadly(worker_deaths, ended_at)[-1:]:  # the main process's own reading, whatever its traceback said
        findings.extend(_dead_workers(death, where))
    findings.extend(_output_findings(output_tail, where, {f.cause for f in findings}))
    sig = _signal_name(exit_code)
    oom = _oom_finding(exit_code, sig, oom_kills, where, findings)
    if oom is not None:
        findings.append(oom)
    findings.sort(key=lambda f: -f.confidence)
    first = first_cause(output_tail)
    if not findings:
        findings.append(_unexplained(exit_code, sig, output_tail, where, first))
    return findings if first is None else _at_first_raise(findings, first, pid)


def _unexplained(
    exit_code: int, sig: str | None, output_tail: str, where: Where | None, first: Raised | None
) -> Finding:
    """A crash nothing explains: its exit, the first raise in the log if any, and the output's last lines."""
    who = "it" if first is None or first.rank is None else f"rank {first.rank}"
    last = [ln for ln in output_tail.strip().splitlines() if ln.strip()][-3:]
    said = f"The job exited with {sig or f'status {exit_code}'}"
    if first is not None:
        summary = f"{said} after {who} {first.text()}."
    else:
        summary = f"{said}; no known failure text was found" + (
            f"; its last line: {last[-1].strip()[:200]!r}." if last else "."
        )
    facts = tuple(f"output: {ln[:300]}" for ln in last)
    return Finding(
        Cause.UNKNOWN,
        0.1 if first is None else 0.3,
        summary,
        where,
        facts,
        ("Read the end of output.log in the run directory for the job's own error.",),
    )


def _at_first_raise(findings: list[Finding], first: Raised, pid: int | None) -> list[Finding]:
    """The line that raised first (not a collective failing for a peer's sake) is where the job went wrong: each
    finding without a line of its own points there, and says so."""
    who = "it" if first.rank is None else f"rank {first.rank}"
    at = first.where(pid or 0, first.rank)
    out = []
    for f in findings:
        if f.where is not None and f.where.file is not None:
            out.append(f)
            continue
        summary = f.summary
        if f.cause == Cause.DISTRIBUTED_PEER_STUCK and first.rank is not None:
            summary = f"{summary.rstrip('.')}: rank {first.rank} {first.text()} first."
        ev = (*f.evidence, f"the job's log: {who} {first.text()}")
        out.append(dataclasses.replace(f, where=at, evidence=ev, summary=summary))
    return out


def _output_findings(output_tail: str, where: Where | None, found: set[str]) -> list[Finding]:
    """One finding per known failure text in the job's output (its last occurrence), for causes not ``found``
    already."""
    out: list[Finding] = []
    seen: set[str] = set()
    for pat in PATTERNS:
        matches = list(pat.regex.finditer(output_tail))
        m = matches[-1] if matches else None  # the last occurrence is the most recent
        if m is None or pat.cause in seen or pat.cause in found:
            continue
        seen.add(pat.cause)
        fields = {k: (v or "").strip() for k, v in m.groupdict().items()}
        line = output_tail[output_tail.rfind("\n", 0, m.start()) + 1 : output_tail.find("\n", m.end())].strip()
        out.append(
            Finding(pat.cause, pat.confidence, pat.summary.format(**fields), where, (f"output: {line[:300]}",), pat.fix)
        )
    return out


def _oom_finding(
    exit_code: int, sig: str | None, oom_kills: int, where: Where | None, findings: list[Finding]
) -> Finding | None:
    """The out-of-memory killer, where the cgroup counted its kills (and nothing surer said so), or where a SIGKILL
    came with nothing else said; None otherwise."""
    exited = f"job exit: {sig or exit_code}"
    if oom_kills > 0 and not any(f.cause == Cause.MEMORY_OOM and f.confidence >= 0.8 for f in findings):
        said = f"The kernel's out-of-memory killer killed {oom_kills} process(es) of the job's cgroup."
        ev: tuple[str, ...] = (f"cgroup memory.events oom_kill increased by {oom_kills}", exited)
        return Finding(Cause.MEMORY_OOM, 0.9, said, where, ev, OOM_FIX)
    if oom_kills <= 0 and exit_code in (-9, 137) and not findings:
        said = "The job was killed by SIGKILL; with nothing else said, the out-of-memory killer is the usual cause."
        return Finding(Cause.MEMORY_OOM, 0.5, said, where, (exited,), OOM_FIX)
    return None

"""What a capture adds from beside the samples: the flight recorder's entries of a rank
(capture/flight.py), the batch each DataLoader worker holds (capture/loader.py), the files a process wrote in the
window, which processes are ranks (torchrun's, mp.spawn's, a relaunched one's), the GPUs and the kernel log."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from hangwatch import signatures as sg
from hangwatch.capture import proc
from hangwatch.capture.flight import parse_dump, read_dumps
from hangwatch.capture.flight import registry as flight_registry
from hangwatch.capture.gpu import GpuSampler
from hangwatch.capture.gpu import detect as detect_gpu
from hangwatch.capture.kernel import read_kernel_events
from hangwatch.capture.loader import loader_tasks
from hangwatch.records.evidence import (
    ProcessEvidence,
    ProcessInfo,
    ProcessSample,
    Role,
)
from hangwatch.records.gpu import GpuEvidence, KernelEvent


def with_flight(processes: tuple[ProcessEvidence, ...], notes: list[str]) -> tuple[ProcessEvidence, ...]:
    """Every rank's flight recorder (ranks that registered a reader under `hangwatch run`), all at once."""
    wanted = {}
    for p in processes:
        if p.exited or p.info.rank is None or p.info.role not in (Role.RANK, Role.MAIN, Role.CHILD):
            continue
        entry = flight_registry(p.info.pid, p.info.env.get("HANGWATCH_HEARTBEAT_DIR"))
        if entry is not None:
            wanted[p.info.pid] = entry
    if not wanted:
        return processes
    dumps = read_dumps(wanted)
    silent = sorted(d.rank if d.rank is not None else d.pid for d in dumps.values() if d.text is None)
    if silent:
        notes.append(f"the flight recorder of rank(s) {silent} did not answer")
    return tuple(
        replace(p, flight=parse_dump(dumps[p.info.pid], since=_since(wanted[p.info.pid]))) if p.info.pid in dumps else p
        for p in processes
    )


def with_loader_tasks(processes: tuple[ProcessEvidence, ...]) -> tuple[ProcessEvidence, ...]:
    """Each DataLoader worker's batch, as its iterator recorded it under `hangwatch run --on-hang heal` (read after
    the window): the record, where there is one, over what the worker's locals showed."""
    tasks = {}
    for p in processes:
        if p.info.role != Role.DATALOADER_WORKER and not p.exited:
            tasks.update(loader_tasks(p.info.env.get("HANGWATCH_HEARTBEAT_DIR"), p.info.pid))
    if not tasks:
        return processes
    # The iterator's own record names its workers: one just started (spawned, still importing) has no worker frames
    # yet, but it is one, and may hold a batch handed to it.
    return tuple(
        replace(
            p,
            loader_task=tasks[p.info.pid],
            info=replace(p.info, role=Role.DATALOADER_WORKER) if p.info.role == Role.CHILD else p.info,
        )
        if p.info.pid in tasks
        else p
        for p in processes
    )


def _since(entry: dict[str, object]) -> float | None:
    at = entry.get("at")
    return float(at) - 0.5 if isinstance(at, int | float) else None  # entries of an earlier process group: out


WRITING_BYTES = 64 * 1024  # written in the window: the files it writes are named


def files_written(pid: int, samples: list[ProcessSample], gone: bool) -> tuple[tuple[str, int], ...]:
    """The files a process that wrote in the window has open for writing (its output log aside)."""
    a, b = samples[0].wchar, samples[-1].wchar
    if gone or a is None or b is None or b - a < WRITING_BYTES:
        return ()
    skip = {proc.fd_target(pid, 1), proc.fd_target(pid, 2)}
    return tuple((path, size) for path, size in proc.files_open_for_writing(pid) if path not in skip)[:4]


SPAWN_WRAP = ("/torch/multiprocessing/spawn.py", "_wrap")


def mark_ranks(
    infos: dict[int, ProcessInfo], series: dict[int, list[ProcessSample]], py_spy: str | None = None
) -> list[str]:
    """Ranks whose environment has no RANK: started by torch.multiprocessing.spawn, or relaunched copies. Notes:
    mp.spawn ranks numbered by start order, where their index could not be read."""
    notes = _mark_spawned_ranks(infos, series, py_spy)
    _mark_relaunched_ranks(infos)
    _mark_target_ranks(infos, series, py_spy)
    return notes


def _wrap_frame(frames: list[dict[str, Any]]) -> dict[str, Any] | None:
    """torch.multiprocessing.spawn's ``_wrap`` frame in a thread's own frames (py-spy's JSON): above a fork's launch
    (below it, a process forked by a rank carries a copy of the rank's stack)."""
    for f in frames:
        name, file = f.get("name"), str(f.get("filename", ""))
        if name in sg.FORK_LAUNCH[1] and sg.stdlib_path(file).endswith(sg.FORK_LAUNCH[0]):
            return None
        if name == SPAWN_WRAP[1] and file.endswith(SPAWN_WRAP[0]):
            return f
    return None


def _spawn_indices(pids: list[int], py_spy: str | None) -> dict[int, int]:
    """pid -> the index ``i`` its ``_wrap(fn, i, ...)`` frame holds, where its locals could be read."""
    if py_spy is None or not pids:
        return {}
    from hangwatch.capture.locals import read_locals_once

    reads, _ = read_locals_once({pid: {pid} for pid in pids}, py_spy, pick=_wrap_frame)
    out = {}
    for pid, rs in reads.items():
        i = next((proc.int_or_none(v) for r in rs for k, v in r.values if k == "i"), None)
        if i is not None:
            out[pid] = i
    return out


def _mark_spawned_ranks(
    infos: dict[int, ProcessInfo], series: dict[int, list[ProcessSample]], py_spy: str | None
) -> list[str]:
    """Processes started by torch.multiprocessing.spawn run ``_wrap(fn, i, ...)``: they are ranks, ``i`` read from
    that frame's locals; where it cannot be read, numbered in start order (spawn starts rank i before rank i+1),
    which is right only while none of them has exited. Their environment has no RANK."""
    spawned: dict[int, list[int]] = {}
    for pid, samples in series.items():
        info = infos[pid]
        if info.role not in (Role.CHILD, Role.MAIN) or info.rank is not None:
            continue
        frames = [f for s in samples for t in s.threads for f in sg.own_frames(t.frames)]  # not a forked copy
        if any(f.file.endswith(SPAWN_WRAP[0]) and f.function == SPAWN_WRAP[1] for f in frames):
            spawned.setdefault(info.ppid, []).append(pid)
    from hangwatch.capture.sockpeer import connected_among

    notes = []
    for pids in spawned.values():
        read = _spawn_indices(pids, py_spy)
        whole = len(read) == len(pids)  # every index read: the ranks, whichever of them have exited
        if not whole:
            notes.append(
                f"the mp.spawn index of pid {', '.join(str(p) for p in sorted(set(pids) - set(read)))} could not be "
                "read: its ranks are numbered by start order, wrong where one of them has exited"
            )
        # every index read, 0..n-1, each rank connected, and only to the others (gloo connects each pair of ranks;
        # a rank of a larger world, here or elsewhere, would show as a peer outside them), and no world size read
        # that says otherwise: the whole world is here, and the indices are the numbers a call's dst names (the
        # tutorial's ``init_process_group(rank=i, world_size=n)``)
        n = len(pids)
        here = whole and sorted(read.values()) == list(range(n)) and all(infos[p].world_size in (None, n) for p in pids)
        here = here and connected_among(pids)
        for order, pid in enumerate(sorted(pids, key=lambda p: (infos[p].create_time, p))):
            rank = read[pid] if whole else order
            # read: how many ranks there were is not (those that exited, the highest among them, are not seen)
            world = n if here else infos[pid].world_size or (None if whole else n)
            infos[pid] = replace(infos[pid], role=Role.RANK, rank=rank, world_size=world, rank_from_args=here)
    return notes


PROCESS_RUN = "multiprocessing/process.py"  # BaseProcess.run: the frame above it is the process's target
RANK_ARGS = ("rank", "global_rank")
WORLD_ARGS = ("world_size", "world", "size", "nprocs")


def _target_frame(frames: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The target of a multiprocessing.Process (the frame right above ``BaseProcess.run``) in a thread's own frames
    (py-spy's JSON, innermost first)."""
    for i, f in enumerate(frames):
        name, file = str(f.get("name", "")), str(f.get("filename", ""))
        if name in sg.FORK_LAUNCH[1] and sg.stdlib_path(file).endswith(sg.FORK_LAUNCH[0]):
            return None
        if sg.stdlib_path(file).endswith(PROCESS_RUN) and name.rsplit(".", 1)[-1] == "run":
            return frames[i - 1] if i > 0 else None
    return None


def _mark_target_ranks(
    infos: dict[int, ProcessInfo], series: dict[int, list[ProcessSample]], py_spy: str | None
) -> None:
    """Ranks a launcher started as multiprocessing.Process children that call init_process_group(rank=...,
    world_size=...) themselves, with no RANK in their environment (torch's own tutorial does so): each in a c10d
    call, its target's arguments named ``rank`` and ``world_size`` (or ``world``, ``size``, ``nprocs``) read from its
    frame. Marked only where every such sibling was read, their ranks are 0..n-1 and each says the world is those
    n: the whole world is on this host, and the numbers are the ones a call's ``dst`` names."""
    from hangwatch.capture.c10d import in_c10d
    from hangwatch.capture.sockpeer import peers_on_this_host

    groups: dict[int, list[int]] = {}
    for pid, samples in series.items():
        info = infos[pid]
        if info.role in (Role.CHILD, Role.MAIN) and info.rank is None and in_c10d(pid, samples):
            groups.setdefault(info.ppid, []).append(pid)
    if py_spy is None or not groups:
        return
    from hangwatch.capture.locals import read_locals_once

    for pids in groups.values():
        if len(pids) < 2:
            continue
        reads, _ = read_locals_once({pid: {pid} for pid in pids}, py_spy, pick=_target_frame)
        got: dict[int, tuple[int | None, int | None]] = {}
        for pid, rs in reads.items():
            values = {k: proc.int_or_none(v) for r in rs for k, v in r.values}
            rank = next((values[k] for k in RANK_ARGS if values.get(k) is not None), None)
            world = next((values[k] for k in WORLD_ARGS if values.get(k) is not None), None)
            got[pid] = (rank, world)
        n = len(pids)
        if len(got) != n or sorted(r for r, _ in got.values() if r is not None) != list(range(n)):
            continue
        if any(w != n for _, w in got.values()) or not all(peers_on_this_host(pid) for pid in pids):
            continue  # the world is not read, is larger than what runs here, or has a peer elsewhere: maybe local
        for pid, (rank, _) in got.items():
            infos[pid] = replace(infos[pid], role=Role.RANK, rank=rank, world_size=n, rank_from_args=True)


def _program(cmdline: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """A command line with every path cut to its last part: ``python train.py`` and
    ``/venv/bin/python /work/train.py`` run the same program."""
    return tuple(os.path.basename(a) for a in cmdline[1:])


def _mark_relaunched_ranks(infos: dict[int, ProcessInfo]) -> None:
    """A process that runs its own command line again once per further device, giving each copy LOCAL_RANK=k
    (Lightning's launcher for ``strategy="ddp"``, and trainers built the same way): it is local rank 0 and its
    copies are local ranks k, on node NODE_RANK; rank = NODE_RANK x (copies + 1) + local rank. Neither the
    process nor its copies have RANK in their environment (Lightning sets it inside, after the start)."""
    copies: dict[int, list[int]] = {}
    for pid, info in infos.items():
        parent = infos.get(info.ppid)
        if (
            info.rank is not None
            or "RANK" in info.env
            or proc.int_or_none(info.env.get("LOCAL_RANK")) in (None, 0)
            or parent is None
            or parent.rank is not None
            or "LOCAL_RANK" in parent.env
            or parent.role not in (Role.MAIN, Role.CHILD)
            or _program(parent.cmdline) != _program(info.cmdline)
        ):
            continue
        copies.setdefault(info.ppid, []).append(pid)
    for ppid, kids in copies.items():
        per_node = len(kids) + 1
        first = infos[kids[0]].env
        node = proc.int_or_none(first.get("NODE_RANK")) or 0
        world = proc.int_or_none(first.get("WORLD_SIZE"))
        for pid in (ppid, *kids):
            local = 0 if pid == ppid else proc.int_or_none(infos[pid].env.get("LOCAL_RANK")) or 0
            infos[pid] = replace(
                infos[pid],
                role=Role.RANK,
                rank=node * per_node + local,
                local_rank=local,
                world_size=world or infos[pid].world_size,
            )


def gpu_and_kernel(
    sampler: GpuSampler | None,
    series: dict[int, list[ProcessSample]],
    infos: dict[int, ProcessInfo],
    started: float,
    notes: list[str],
    kernel: bool,
) -> tuple[GpuEvidence | None, tuple[KernelEvent, ...]]:
    """The GPUs over the window (stopping the sampler), and the kernel log since the job started."""
    gpu_ev = None
    if sampler is not None:
        sampler.stop()
        try:
            gpu_ev, gpu_notes = sampler.evidence(series)
        except Exception as e:  # noqa: BLE001 - GPUs are evidence, never a reason for a capture to fail
            gpu_ev, gpu_notes = None, [f"GPU readings could not be used: {type(e).__name__}: {e}"]
        notes.extend(gpu_notes)
    if not kernel:
        return gpu_ev, ()
    job_start = min((infos[p].create_time for p in series if p in infos), default=started)
    events, kernel_note = read_kernel_events(job_start)
    if kernel_note:
        notes.append(kernel_note)
    return gpu_ev, events


def gpu_sampler(notes: list[str]) -> GpuSampler | None:
    """Reading the GPUs in the background over the window, when there are any."""
    try:
        backend, note = detect_gpu()
    except Exception as e:  # noqa: BLE001 - GPUs are evidence, never a reason for a capture to fail
        backend, note = None, f"GPU detection failed: {type(e).__name__}: {e}"
    if note:
        notes.append(note)
    return GpuSampler(backend).start() if backend is not None else None

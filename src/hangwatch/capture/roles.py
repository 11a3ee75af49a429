"""What a process of the job is, from its name, command line and environment: main, a DataLoader worker, a rank,
a launcher, a compile worker, a child, an orphan (``assign_role``), and the multiprocessing helpers that are none of
the job's work."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hangwatch.launcher import is_launcher_command

if TYPE_CHECKING:
    from hangwatch.records.evidence import Role

# torch names every thread of a DataLoader worker this (torch >= 1.x, verified on 2.13).
DATALOADER_WORKER_COMM = "pt_data_worker"
# torchrun's elastic agent renames itself (verified on torch 2.13).
ELASTIC_AGENT_COMM = "pt_elastic"
COMPILE_WORKER_MARKERS = ("_inductor/compile_worker", "torch._inductor.compile_worker")
COMPILER_COMMS = frozenset(
    {"cc1plus", "cc1", "as", "ld", "collect2", "gcc", "g++", "c++", "clang", "clang++", "ptxas", "nvcc", "cicc"}
)


def is_launcher(comm: str, cmdline: tuple[str, ...]) -> bool:
    """Whether a process is a distributed launcher (torchrun, deepspeed, accelerate)."""
    if comm == ELASTIC_AGENT_COMM:
        return True
    return is_launcher_command(cmdline)


def is_compile_worker(comm: str, cmdline: tuple[str, ...]) -> bool:
    """Whether a process is one of inductor's compile workers."""
    return comm in COMPILER_COMMS or any(m in " ".join(cmdline) for m in COMPILE_WORKER_MARKERS)


# multiprocessing's own helpers: they live as long as the process that started them, which never waits for their end
FORKSERVER = "multiprocessing.forkserver"  # its command line: `python -c 'from multiprocessing.forkserver import main'`
# (multiprocess, the dill fork of multiprocessing in HF datasets, starts the same helpers from its own package)
_HELPERS = ("multiprocessing.resource_tracker", FORKSERVER, "multiprocessing.semaphore_tracker")
MP_HELPERS: tuple[str, ...] = _HELPERS + tuple(h.replace("multiprocessing.", "multiprocess.") for h in _HELPERS)


def forkserver(cmdline: tuple[str, ...] | list[str]) -> bool:
    """Whether a command line is multiprocessing's (or multiprocess's) forkserver's."""
    line = " ".join(cmdline)
    return FORKSERVER in line or FORKSERVER.replace("multiprocessing.", "multiprocess.") in line


def is_mp_helper(cmdline: tuple[str, ...] | list[str], parent_cmdline: tuple[str, ...] | list[str] = ()) -> bool:
    """Whether a process is one of multiprocessing's helpers (its resource tracker, its forkserver). A child of the
    forkserver carries its command line, forked from it, and is none: a pool's worker (``parent_cmdline``: its
    parent's, where known)."""
    line = " ".join(cmdline)
    return any(h in line for h in MP_HELPERS) and " ".join(parent_cmdline) != line


def assign_role(
    pid: int,
    root: int,
    main: int,
    comm: str,
    cmdline: tuple[str, ...],
    env: dict[str, str],
    parent_env: dict[str, str],
    orphan: bool,
    thread_comms: list[str],
) -> Role:
    """The role of a job member: main, worker, rank, launcher, compile worker, child, orphan."""
    from hangwatch.records.evidence import Role  # here: the supervisor's start does not pay for evidence's import

    if orphan:
        return Role.ORPHAN
    if comm == DATALOADER_WORKER_COMM or DATALOADER_WORKER_COMM in thread_comms:
        return Role.DATALOADER_WORKER
    if is_launcher(comm, cmdline):
        return Role.LAUNCHER
    if is_compile_worker(comm, cmdline):
        return Role.COMPILE_WORKER
    # A rank has RANK in its environment that its parent did not give to itself (a DataLoader
    # worker inherits its rank's environment, so it is caught above or here by the parent test).
    # multiprocessing's own helpers (the resource tracker, the forkserver) inherit whatever environment
    # their starter had when they started: never a rank.
    if "RANK" in env and parent_env.get("RANK") != env.get("RANK") and not is_mp_helper(cmdline):
        return Role.RANK
    if pid == main:
        return Role.MAIN
    if pid == root:
        return Role.LAUNCHER  # a non-Python wrapper that started the main process
    return Role.CHILD

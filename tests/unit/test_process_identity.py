"""Who a process is, by what it runs, never by a word in a path: hangwatch's supervisor, a launcher, the job.

Here the tests that start no process; those that do are in tests/e2e/test_process_identity.py.
"""

from __future__ import annotations

import pytest

from hangwatch.capture.proc import is_launcher
from hangwatch.launcher import is_launcher_command, is_supervisor_command, program


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/home/u/hangwatch-venv/bin/python", "train.py"], ("train.py", "")),
        (["/usr/bin/python3.11", "-u", "-W", "ignore", "/src/hangwatch/train.py", "--lr", "1"], ("train.py", "--lr")),
        (
            ["python", "-m", "torch.distributed.run", "--nproc-per-node", "2"],
            ("torch.distributed.run", "--nproc-per-node"),
        ),
        (["python3", "-mhangwatch", "run"], ("hangwatch", "run")),
        (["/venv/bin/python", "/venv/bin/accelerate", "launch", "t.py"], ("accelerate", "launch")),
        (["/opt/torchrun-tools/job.sh", "x"], ("job.sh", "x")),
        (["python", "-c", "import hangwatch"], ("-c", "")),
        ([], ("", "")),
    ],
)
def test_program_is_what_the_command_runs(argv, expected):
    assert program(argv) == expected


@pytest.mark.parametrize(
    ("argv", "launcher"),
    [
        (["/venv/bin/python", "/venv/bin/torchrun", "--nproc-per-node", "2", "t.py"], True),
        (["python", "-m", "torch.distributed.launch", "t.py"], True),
        (["/venv/bin/python", "/venv/bin/accelerate", "launch", "t.py"], True),
        (["/venv/bin/python", "/venv/bin/accelerate", "config"], False),
        (["deepspeed", "t.py"], True),
        (["python", "/home/u/torchrun-experiments/train.py"], False),  # a folder named after a launcher
        (["/home/u/venvs/deepspeed/bin/python", "train.py"], False),  # a venv named after a launcher
    ],
)
def test_launcher_by_what_runs(argv, launcher):
    assert is_launcher_command(argv) is launcher
    assert is_launcher("python3", tuple(argv)) is launcher


@pytest.mark.parametrize(
    ("argv", "supervisor"),
    [
        (["/venv/bin/python", "/venv/bin/hangwatch", "run", "--", "python", "t.py"], True),
        (["python", "-m", "hangwatch", "inspect", "12"], True),
        (["/root/.cache/hangwatch-venv/bin/python", "train.py"], False),
        (["python", "/home/u/hangwatch/train.py"], False),
        (["python", "hangwatch.py"], False),
    ],
)
def test_supervisor_by_what_runs(argv, supervisor):
    assert is_supervisor_command(argv) is supervisor


def _info(pid, ppid, role, cmdline, env):
    from hangwatch.records.evidence import ProcessInfo

    return ProcessInfo(
        pid=pid,
        ppid=ppid,
        pgid=pid,
        sid=1,
        name="python",
        cmdline=tuple(cmdline),
        exe=None,
        is_python=True,
        role=role,
        rank=None,
        local_rank=None,
        world_size=None,
        create_time=0.0,
        stdout=None,
        stderr=None,
        stdout_is_file=False,
        env=env,
    )


def test_lightning_relaunched_copies_and_their_script_are_the_ranks():
    """Lightning's ddp launcher: the script (no RANK, no LOCAL_RANK) runs itself again per further device with
    LOCAL_RANK=k, NODE_RANK and WORLD_SIZE; the script is rank 0 of its node."""
    from hangwatch.capture.enrich import _mark_relaunched_ranks
    from hangwatch.records.evidence import Role

    env = {"LOCAL_RANK": "1", "NODE_RANK": "1", "WORLD_SIZE": "4", "MASTER_ADDR": "10.0.0.1"}
    infos = {
        10: _info(10, 1, Role.MAIN, ["python", "train.py", "--lr", "0.1"], {}),
        11: _info(11, 10, Role.CHILD, ["/venv/bin/python", "/work/train.py", "--lr", "0.1"], env),
        12: _info(12, 10, Role.CHILD, ["/bin/sh", "-c", "nvidia-smi"], {"LOCAL_RANK": "1"}),  # not a copy
        13: _info(13, 1, Role.MAIN, ["python", "other.py"], {}),
    }
    _mark_relaunched_ranks(infos)
    assert (infos[10].role, infos[10].rank, infos[10].local_rank, infos[10].world_size) == (Role.RANK, 2, 0, 4)
    assert (infos[11].role, infos[11].rank, infos[11].local_rank) == (Role.RANK, 3, 1)
    assert (infos[12].role, infos[12].rank) == (Role.CHILD, None)
    assert (infos[13].role, infos[13].rank) == (Role.MAIN, None)
    # A worker that inherits its rank's LOCAL_RANK (a DataLoader worker, a forked helper) is no copy: its
    # parent has LOCAL_RANK too.
    infos = {
        20: _info(20, 1, Role.RANK, ["python", "train.py"], {"LOCAL_RANK": "1", "RANK": "1"}),
        21: _info(21, 20, Role.CHILD, ["python", "train.py"], {"LOCAL_RANK": "1", "RANK": "1"}),
    }
    _mark_relaunched_ranks(infos)
    assert infos[21].role == Role.CHILD and infos[21].rank is None


def test_a_serving_thread_moving_while_the_counters_are_read_is_not_the_jobs_work(tmp_path, monkeypatch):
    """torch's debug server thread may move gigabytes a second while /proc is read: taking its counters off the
    process's, read a moment apart, left megabytes that read as the job's work (suite run 17). Forced here: the
    serving thread (tid 11) moves 10 MB between any two reads of /proc; the job's own thread (tid 10) moves 3 KB
    between the looks, and that is all a look may see. A thread that exits keeps its share; the serving thread's
    exit adds nothing."""
    from hangwatch.capture import proc

    counters = {10: 1000, 11: 0, "dead": 0}
    root = tmp_path / "proc"
    for tid in (10, 11):
        (root / "10" / "task" / str(tid)).mkdir(parents=True)
    (root / "10" / "task" / "11" / "comm").write_text("pt_workerserver\n")
    (root / "10" / "task" / "10" / "comm").write_text("python\n")
    real = proc._io_counters

    def read(path):
        if 11 in counters:
            counters[11] += 10_000_000  # the serving thread never stops
        key = path.parent.name if path.parent.parent.name == "task" else "whole"
        if key == "whole":
            value = counters["dead"] + sum(v for k, v in counters.items() if k != "dead")
        elif int(key) in counters:
            value = counters[int(key)]
        else:
            return real(path)
        return {"rchar": value, "wchar": 0}

    monkeypatch.setattr(proc, "PROC", root)
    monkeypatch.setattr(proc, "_io_counters", read)
    monkeypatch.setattr(proc, "_IO_BOOKS", {})
    first = proc.read_io(10)["rchar"]
    counters[10] += 3000
    assert proc.read_io(10)["rchar"] - first == 3000
    counters["dead"] += counters.pop(11)  # the serving thread exits: its counters join the process's
    (root / "10" / "task" / "11" / "comm").unlink()
    (root / "10" / "task" / "11").rmdir()
    assert proc.read_io(10)["rchar"] - first == 3000
    (root / "10" / "task" / "12").mkdir()  # a job's thread comes, moves 5 KB and exits: its share stays
    (root / "10" / "task" / "12" / "comm").write_text("python\n")
    counters[12] = 5000
    assert proc.read_io(10)["rchar"] - first == 8000
    counters["dead"] += counters.pop(12)
    (root / "10" / "task" / "12" / "comm").unlink()
    (root / "10" / "task" / "12").rmdir()
    assert proc.read_io(10)["rchar"] - first == 8000


def test_a_forkservers_child_is_a_pool_worker_not_a_helper():
    """multiprocessing's helpers are the resource tracker and the forkserver; a child of the forkserver carries its
    command line (forked from it) and is a pool's worker."""
    from hangwatch.capture.roles import is_mp_helper

    server = ("python", "-B", "-c", "from multiprocessing.forkserver import main; main(10, 11, ['__main__'])")
    tracker = ("python", "-B", "-c", "from multiprocessing.resource_tracker import main;main(7)")
    main = ("python", "train.py")
    assert is_mp_helper(server, main) and is_mp_helper(tracker, main) and is_mp_helper(server)
    assert not is_mp_helper(server, server)  # the forkserver's child: a worker
    assert is_mp_helper(tracker, server)  # a tracker a worker started: still a helper
    assert not is_mp_helper(main, main)  # a fork worker of main: no helper at all

"""`hangwatch probe-data` on datasets that hang or fail the ways users' datasets do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import clean_env, marker

pytestmark = pytest.mark.e2e

pytest.importorskip("torch")

TARGETS = Path(__file__).resolve().parents[1] / "probe_targets.py"
QUICK = ["--samples", "16", "--item-timeout", "3", "--cell-timeout", "45", "--epochs", "1", "--workers", "2"]


MARK = "HW_PROBE_TEST"  # every process a probe starts inherits it: cleanup finds them by it


@pytest.fixture(autouse=True)
def no_process_left(tmp_path):
    yield
    left = []
    for p in psutil.process_iter():
        try:
            if p.pid != os.getpid() and p.environ().get(MARK) == str(tmp_path):
                left.append(p)
        except psutil.Error:
            continue
    for p in left:
        p.kill()
    psutil.wait_procs(left, timeout=10)
    assert not left, f"probe-data left processes behind: {[p.pid for p in left]}"


def probe(tmp_path: Path, func: str, *args: str, timeout: float = 300) -> tuple[int, dict, str]:
    r = subprocess.run(
        [sys.executable, "-m", "hangwatch", "probe-data", f"{TARGETS}:{func}", "--json", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=clean_env(**{MARK: str(tmp_path)}),
    )
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}), r.stderr


def cells(report: dict, context: str | None = None) -> list[dict]:
    return [c for c in report["cells"] if context is None or c["multiprocessing_context"] == context]


@pytest.mark.slow
@pytest.mark.timeout(180)  # about 45 s (it asserts 100 s at most)
def test_fork_only_hang_is_found_and_spawn_recommended_over_it(tmp_path):
    t0 = time.monotonic()
    code, rep, err = probe(tmp_path, "fork_hazard", *QUICK, "--contexts", "fork,spawn")
    assert code == 0, err
    assert rep["schema"] == "hangwatch.probe/1"
    for c in cells(rep, "fork"):
        assert c["status"] == "hung", c
        assert c["finding"]["cause"] == "fork.inherited_lock"
        w = c["finding"]["where"]
        assert (w["file"], w["line"]) == marker(TARGETS, "HANG-HERE:fork")
    spawn = [(c["status"], c["samples_per_s"], c.get("finding")) for c in cells(rep, "spawn")]
    assert all(status == "ok" and rate > 0 for status, rate, _ in spawn), spawn
    rec = rep["recommendation"]["dataloader_kwargs"]
    assert rec.get("multiprocessing_context") != "fork"
    # A fork cell's workers start from the cell's own imports: its first batch gets 10 s once the
    # DataLoader exists, not the 30 s a spawn worker's torch import needs (2 hung cells: not a minute). About 45-52 s
    # alone, 77 s once in a CI run on a loaded machine and 118 s in another on a day this machine ran at half speed:
    # 150 s, which guards only against waits far longer than the cells' (30 s cells come to about 85 s alone).
    assert time.monotonic() - t0 < 150


def test_a_batch_that_computes_past_the_item_timeout_is_looked_at_and_not_called_hung(tmp_path):
    """The twin of the hung cells: a worker computes one batch for 5 s, past --item-timeout 1.5. The look proves
    work (its loop's locals advance): the cell gets another --item-timeout at each look and ends ok (it was hung by the
    clock; under load, torch ending a spawn cell's workers after its last batch was too)."""
    code, rep, err = probe(tmp_path, "long_batch", *QUICK, "--contexts", "fork", "--item-timeout", "1.5")
    assert code == 0, err
    assert cells(rep) and all((c["status"], c.get("finding")) == ("ok", None) for c in cells(rep)), cells(rep)


def test_hanging_index_is_reported_with_its_line_and_left_out_of_the_matrix(tmp_path):
    code, rep, err = probe(tmp_path, "hanging_index", *QUICK, "--contexts", "fork", "--item-timeout", "2")
    assert code == 0, err
    (hung,) = rep["items"]["hung"]
    assert hung["index"] == 7
    assert (hung["where"]["file"], hung["where"]["line"]) == marker(TARGETS, "HANG-HERE:index")
    assert rep["items"]["checked"] == 16
    assert all(c["status"] == "ok" for c in rep["cells"])
    assert rep["recommendation"] is not None


def test_raising_index_is_reported_with_its_error(tmp_path):
    code, rep, err = probe(tmp_path, "raising_index", *QUICK, "--contexts", "fork")
    assert code == 0, err
    assert rep["items"]["failed"] == [{"index": 3, "error": "ValueError: corrupt record in shard for index 3"}]
    assert all(c["status"] == "ok" for c in rep["cells"])


@pytest.mark.parametrize("target", ["crashing_workers", "crashing_workers_heard_late"])
def test_crashing_workers_leave_num_workers_0_as_the_stable_choice(tmp_path, target):
    """Heard late: the look at 3 s finds the dead worker (a zombie killed by SIGKILL) and the main process waiting
    for it, a wait its exit ends: not hung, another --item-timeout, and torch's check at 5 s crashes the cell."""
    code, rep, err = probe(tmp_path, target, *QUICK, "--contexts", "fork")
    assert code == 0, err
    assert all(c["status"] == "crashed" and c["finding"]["cause"] == "dataloader.worker_died" for c in rep["cells"]), [
        (c["status"], c.get("finding")) for c in rep["cells"]
    ]
    assert rep["baseline"]["status"] == "ok"
    assert rep["recommendation"]["dataloader_kwargs"] == {"num_workers": 0}


def test_iterable_dataset(tmp_path):
    code, rep, err = probe(tmp_path, "stream", *QUICK, "--contexts", "fork")
    assert code == 0, err
    assert rep["items"]["checked"] == 16 and all(c["status"] == "ok" for c in rep["cells"])


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz:make", "cannot import no_such_module_xyz"),
        (f"{TARGETS}:nope", "has no function nope"),
        (f"{TARGETS}:not_a_dataset", "returned int, not a dataset"),
        (f"{TARGETS}:bad_len", "len() of the dataset raised TypeError"),
        ("just_a_name", "is not MODULE:FUNCTION"),
    ],
)
def test_bad_targets_exit_2_with_one_line(target, message):
    r = subprocess.run(
        [sys.executable, "-m", "hangwatch", "probe-data", target],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
    )
    assert r.returncode == 2, r
    assert message in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr

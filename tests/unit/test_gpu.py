"""GPU evidence, kernel faults and GPU-safe restarts, without a GPU.

The boundary is faked, nothing above it: real outputs of nvidia-smi, rocm-smi and kernel logs (from
public test data and issue threads: tests/fixtures/gpu/SOURCES.md) go through hangwatch's parsers;
an NVML stand-in with pynvml's function names drives the NVML backend; and a fake backend
(``HANGWATCH_GPU_FAKE``) stands in for the driver under real `hangwatch run` / `inspect` / `doctor`
processes, with a job that "holds" GPU memory while it lives.

Here the tests that start no process; those that do are in tests/e2e/test_gpu.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from hangwatch.capture.gpu_backends import NvmlBackend, Reading, parse_nvidia_smi_xml, parse_rocm_smi, throttle_names
from hangwatch.capture.kernel import boot_time, classify, parse_kmsg_record, parse_lines, read_kernel_events
from hangwatch.diagnose import diagnose
from hangwatch.diagnose.crash import diagnose_crash
from hangwatch.diagnose.raised import tracebacks
from hangwatch.evidence_io import evidence_from_dict
from hangwatch.records.evidence import Evidence
from hangwatch.records.gpu import GpuDevice, GpuEvidence, GpuProcessMemory, KernelEvent
from hangwatch.supervise.job.gpu_release import wait_release

GPU = Path(__file__).resolve().parents[1] / "fixtures" / "gpu"
FIXTURES_EVIDENCE = Path(__file__).resolve().parents[1] / "fixtures" / "evidence"


def kmsg(name: str) -> list[KernelEvent]:
    pairs = parse_lines((GPU / name).read_text().splitlines(), boot_time())
    return [e for at, m in pairs if (e := classify(m, at)) is not None]


# --- parsers on real outputs ---------------------------------------------------------------------------------
def test_nvidia_smi_xml_of_a_t4_with_processes():
    reading, driver, cuda = parse_nvidia_smi_xml((GPU / "nvidia-smi-q-x-tesla-t4.xml").read_text())
    (d,) = reading.devices
    assert (driver, cuda, d.name, d.bus_id) == ("515.105.01", "11.7", "Tesla T4", "00000000:00:1E.0")
    assert (d.memory_used_mib, d.memory_total_mib, d.temperature_c, d.power_w, d.power_limit_w) == (
        1032.0,
        15360.0,
        40.0,
        26.78,
        70.0,
    )
    assert (d.ecc_uncorrected, d.retired_pages, d.persistence_mode) == (0, 0, False)
    assert reading.processes == ((675, 0, 22.0), (5762, 0, 1005.0))


def test_nvidia_smi_xml_v12_clocks_event_reasons_and_power_readings():
    reading, driver, _ = parse_nvidia_smi_xml((GPU / "nvidia-smi-q-x-rtx-3060-v12.xml").read_text())
    (d,) = reading.devices
    assert driver == "570.124.04" and d.power_w == 11.63 and d.power_limit_w == 170.0 and d.persistence_mode


def test_rocm_smi_json_old_and_new_keys():
    mi100, driver = parse_rocm_smi((GPU / "rocm-smi-mi100-rocm602.json").read_text())
    assert driver == "6.3.6" and len(mi100.devices) == 4
    assert {d.name for d in mi100.devices} == {"Arcturus GL-XL [Instinct MI100]"}
    assert mi100.devices[0].temperature_c == 53.0 and mi100.devices[0].memory_total_mib == 32752.0
    rx, _ = parse_rocm_smi((GPU / "rocm-smi-rx6700xt-rocm612.json").read_text())
    d = rx.devices[0]
    assert d.vendor == "amd" and d.mem_util_percent == (12.0,) and 1400 < (d.memory_used_mib or 0) < 1600
    assert d.power_limit_w == 211.0


class FakeNvml:
    """pynvml's functions, answering from a dict: the boundary of the NVML backend."""

    class NVMLError_NotSupported(Exception):
        pass

    def __init__(self, devices: list[dict]) -> None:
        self.devices = devices

    def nvmlInit(self) -> None: ...
    def nvmlSystemGetDriverVersion(self) -> str:
        return "570.124.06"

    def nvmlSystemGetNVMLVersion(self) -> str:
        return "12.570.124.06"

    def nvmlDeviceGetCount(self) -> int:
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> dict:
        return self.devices[i]

    def nvmlDeviceGetName(self, h: dict) -> bytes:
        return h["name"].encode()

    def nvmlDeviceGetUtilizationRates(self, h):
        return SimpleNamespace(gpu=h["util"], memory=h["mem_util"])

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(used=h["used"] << 20, total=81559 << 20)

    def nvmlDeviceGetPciInfo(self, h):
        return SimpleNamespace(busId=b"00000000:1B:00.0")

    def nvmlDeviceGetPowerUsage(self, h):
        return h["mw"]

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return 700_000

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return h["reasons"]

    def nvmlDeviceGetTemperature(self, h, sensor):
        return 71

    def nvmlDeviceGetPersistenceMode(self, h):
        return 1

    def nvmlDeviceGetTotalEccErrors(self, h, error_type, counter_type):
        if h.get("no_ecc"):
            raise self.NVMLError_NotSupported("Not Supported")
        return 2 if error_type == 1 else 40

    def nvmlDeviceGetRetiredPages(self, h, cause):
        return [0x1000] if cause == 1 else []

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        return [SimpleNamespace(pid=p, usedGpuMemory=m << 20) for p, m in h["procs"]]

    def nvmlDeviceGetGraphicsRunningProcesses(self, h):
        raise self.NVMLError_NotSupported("Not Supported")


def test_nvml_backend_reads_every_field_and_says_none_for_unsupported():
    nvml = FakeNvml(
        [
            {
                "name": "NVIDIA H100 80GB HBM3",
                "util": 100,
                "mem_util": 3,
                "used": 71000,
                "mw": 96_000,
                "reasons": 0x1 | 0x4 | 0x40,
                "procs": [(4242, 70000)],
            },
            {
                "name": "NVIDIA H100 80GB HBM3",
                "util": 0,
                "mem_util": 0,
                "used": 3,
                "mw": 70_000,
                "reasons": 0x1,
                "procs": [],
                "no_ecc": True,
            },
        ]
    )
    b = NvmlBackend(nvml)
    r = b.read()
    d0, d1 = r.devices
    assert (b.driver, b.library) == ("570.124.06", "12.570.124.06")
    assert (d0.util_percent, d0.power_w, d0.power_limit_w, d0.memory_used_mib) == ((100.0,), 96.0, 700.0, 71000.0)
    assert d0.throttle_reasons == ("sw_power_cap", "hw_thermal_slowdown")  # GPU idle (0x1) is not throttling
    assert (d0.ecc_uncorrected, d0.ecc_corrected, d0.retired_pages, d0.persistence_mode) == (2, 40, 1, True)
    assert (d1.ecc_uncorrected, d1.throttle_reasons) == (None, ())
    assert r.processes == ((4242, 0, 70000.0),)
    assert throttle_names(0x8 | 0x80) == ("hw_slowdown", "hw_power_brake_slowdown")


# --- the kernel log --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fixture", "kind", "code", "pid", "name"),
    [
        ("kmsg-nvidia-xid79-fallen-off-bus.txt", "xid", 79, None, None),
        ("kmsg-nvidia-xid79-pid-unknown.txt", "xid", 79, None, None),
        ("kmsg-nvidia-xid43-31-94-ctime.txt", "xid", 43, 1045242, "pt_main_thread"),
        ("kmsg-nvidia-xid31-pid-name.txt", "xid", 31, 169800, "chrome"),
        ("kmsg-nvidia-xid31-mmu-fault-and-xid13.txt", "xid", 31, None, None),
        ("kmsg-nvidia-xid13-xid109-ctime.txt", "xid", 13, None, None),
        ("kmsg-nvidia-xid119-gsp.txt", "xid", 119, 4071838, "python"),
        ("kmsg-nvidia-fallen-off-bus-no-xid.txt", "fell_off_bus", None, None, None),
        ("kmsg-nvidia-gpu-at-fallen-off-bus-old.txt", "fell_off_bus", None, None, None),
        (
            "kmsg-amdgpu-restore-userptr-hogged-ring-timeout-journal.txt",
            "amdgpu_hog",
            None,
            None,
            "amdgpu_amdkfd_restore_userptr_worker",
        ),
        ("kmsg-amdgpu-workqueue-hogged.txt", "amdgpu_hog", None, None, "kfd_process_wq_release"),
        ("kmsg-amdgpu-ring-timeout-reset-mes.txt", "amdgpu_fault", None, None, None),
        ("kmsg-amdgpu-mes-remove-queue-kfd.txt", "amdgpu_fault", None, None, None),
        ("kmsg-amdgpu-job-timedout-old-format.txt", "amdgpu_fault", None, None, None),
        ("kmsg-oom-global-with-pgtables.txt", "oom_kill", None, 7899, "python"),
        ("kmsg-oom-killed-older-format-reaper.txt", "oom_kill", None, 15784, "python3"),
        ("kmsg-hung-task-nfsd-old.txt", "hung_task", None, 3780, "nfsd"),
        ("kmsg-nfs-not-responding-and-hung-task.txt", "nfs_down", None, None, "ease"),
    ],
)
def test_kernel_log_lines_are_classified(fixture, kind, code, pid, name):
    first = next(e for e in kmsg(fixture) if e.kind == kind)
    assert (first.code, first.pid, first.name) == (code, pid, name)


def test_kernel_log_times_and_raw_kmsg_records():
    booted = boot_time()
    at, msg = parse_kmsg_record("6,1234,5000000,-;NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.", booted)
    assert at == pytest.approx(booted + 5.0) and classify(msg, at).code == 79  # type: ignore[union-attr]
    (ctime,) = [a for a, m in parse_lines(["[Wed Jul 31 23:14:18 2024] NVRM: Xid (PCI:0000:00:05): 43, pid=1"], booted)]
    assert ctime is not None and 1722384000 < ctime < 1722556800  # 2024-07-31, in any time zone
    assert kmsg("kmsg-raw-format-example.txt") == []  # records of no interest, continuation lines skipped
    events, note = read_kernel_events(0.0, {})  # this machine's own log: read, or a note; never an error
    assert isinstance(events, tuple) and (note is None or "kernel log" in note)


# --- rules on records -------------------------------------------------------------------------------------------
def h200(case: str) -> Evidence:
    """A capture recorded on an H200 by tests/fixtures/gpu/h200/cases.py."""
    return evidence_from_dict(json.loads((GPU / "h200" / f"evidence-{case}.json").read_text()))


def evidence(name: str, **changes):
    ev = evidence_from_dict(json.loads((FIXTURES_EVIDENCE / f"{name}.json").read_text()))
    return replace(ev, **changes)


def gpu(util: float, power: float, job_pid: int | None = None) -> GpuEvidence:
    dev = GpuDevice(
        0,
        "NVIDIA H100 80GB HBM3",
        "nvidia",
        util_percent=(util,) * 10,
        power_w=power,
        power_limit_w=700.0,
        memory_used_mib=70000.0,
        memory_total_mib=81559.0,
    )
    procs = (GpuProcessMemory(job_pid, 0, 70000.0, True),) if job_pid else ()
    return GpuEvidence("fake", "570", None, (dev,), procs, reads=10)


def test_an_xid_79_is_the_root_cause_over_what_the_stacks_say():
    d = diagnose(evidence("deadlock", kernel=tuple(kmsg("kmsg-nvidia-xid79-fallen-off-bus.txt"))))
    root = d.findings[0]
    assert (root.cause, d.verdict.value) == ("gpu.fault", "hung") and "Xid 79" in root.summary
    assert "fallen off the bus" in root.summary and "reboot" in root.fix[0]
    assert any(f.cause == "code.deadlock" for f in d.findings[1:])


def test_xids_count_only_when_they_are_this_jobs():
    lines = tuple(kmsg("kmsg-nvidia-xid43-31-94-ctime.txt"))  # pids of another machine's jobs
    others = diagnose(evidence("deadlock", kernel=lines))
    root = others.findings[0]
    assert root.cause == "code.deadlock"  # someone else's faults never decide this job's fate
    assert any("not attributed to this job" in e and "Xid" in e for e in root.evidence)
    ev = evidence("unknown_still_points_at_the_line")
    ours = tuple(replace(e, pid=ev.root_pid) if e.code == 43 else e for e in lines)
    root43 = diagnose(replace(ev, kernel=ours)).findings[0]
    assert "Xid 43" in root43.summary and f"pid {ev.root_pid}" in root43.summary
    assert "CUDA_LAUNCH_BLOCKING=1" in root43.fix[0]
    on_our_gpu = replace(
        gpu(0.0, 70.0, ev.root_pid), devices=(replace(gpu(0.0, 70.0).devices[0], bus_id="00000000:00:08.0"),)
    )
    root94 = diagnose(replace(ev, kernel=lines, gpu=on_our_gpu)).findings[0]  # pid unknown, but our GPU's bus
    assert root94.cause == "gpu.fault" and "Xid 94" in root94.summary and "reboot" in root94.fix[0]


def test_informational_xids_and_a_previous_attempts_cleanup_decide_nothing():
    ev = evidence("unknown_still_points_at_the_line")
    info = (
        tuple(replace(e, pid=ev.root_pid) for e in kmsg("kmsg-nvidia-xid45-caused-by-previous.txt"))
        + tuple(kmsg("kmsg-nvidia-xid63-row-remapper.txt"))
        + tuple(e for e in kmsg("kmsg-nvidia-xid94-and-nvlink-144-149.txt") if "Nonfatal" in e.text)
    )
    d = diagnose(replace(ev, kernel=info))
    assert all(f.cause != "gpu.fault" for f in d.findings)


def test_amdgpu_hogged_cpu_lines_join_a_stuck_dataloader_with_the_rocm_fix():
    d = diagnose(
        evidence("dataloader_worker_stuck-dl_worker_blocked", kernel=tuple(kmsg("kmsg-amdgpu-workqueue-hogged.txt")))
    )
    assert d.findings[0].cause == "dataloader.worker_stuck"
    amd = next(f for f in d.findings if f.cause == "gpu.fault")
    assert "hogged a CPU" in amd.summary and any("spawn" in fx for fx in amd.fix)


def test_all_gpus_idle_while_hung_says_the_host_side_is_stuck():
    ev = evidence("deadlock")
    root = diagnose(replace(ev, gpu=gpu(0.0, 70.0, ev.root_pid))).findings[0]
    assert root.cause == "code.deadlock" and "the host side is stuck" in root.evidence[-1]


def test_a_busy_gpu_under_a_collective_is_nccl_spinning_not_work():
    ev = evidence("distributed_peer_stuck_names_culprit_rank")
    d = diagnose(replace(ev, gpu=gpu(100.0, 400.0, ev.root_pid)))
    assert d.findings[0].cause == "distributed.peer_stuck" and "busy-wait" in d.findings[0].evidence[-1]
    assert all(f.cause != "gpu.long_kernel" for f in d.findings)
    # ranks in a send/recv ring miss no peer: the line says only that the kernels spin where the ranks wait
    ev = evidence("distributed_p2p_send_cycle")
    ring = diagnose(replace(ev, gpu=gpu(100.0, 400.0, ev.root_pid))).findings[0]
    assert "busy-wait" in ring.evidence[-1] and "missing" not in ring.evidence[-1], ring.evidence


def test_a_busy_gpu_is_a_long_kernel_at_working_power_and_a_silent_stall_near_idle_power():
    ev = evidence("unknown_still_points_at_the_line")
    working = diagnose(replace(ev, gpu=gpu(100.0, 650.0, ev.root_pid)))
    assert (working.findings[0].cause, working.verdict.value) == ("gpu.long_kernel", "slow")  # alive: no kill
    spinning = diagnose(replace(ev, gpu=gpu(100.0, 75.0, ev.root_pid)))  # one kernel spins: nothing proves a hang
    assert (spinning.findings[0].cause, spinning.verdict.value) == ("gpu.long_kernel", "slow")
    assert "75 W of 700 W" in spinning.findings[0].evidence[0] and "idle power" in spinning.findings[0].summary
    assert "--max-slow" in spinning.findings[0].fix[0]


# --- recorded on an NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130): tests/fixtures/gpu/h200/cases.py --------
def test_nvidia_smi_xml_of_an_h200():
    reading, driver, cuda = parse_nvidia_smi_xml((GPU / "nvidia-smi-q-x-h200.xml").read_text())
    (d,) = reading.devices
    assert (driver, cuda, d.name, d.memory_total_mib, d.power_limit_w) == (
        "580.159.04",
        "13.0",
        "NVIDIA H200",
        143771.0,
        700.0,
    )
    assert d.persistence_mode and d.ecc_uncorrected == 0 and reading.processes == ()


def test_on_an_h200_a_kernel_that_spins_draws_idle_power_and_is_alive_not_a_fault():
    """torch.cuda._sleep: one thread spinning on the clock for ~1000 s, a finite kernel. It read 100% at 124 W
    of 700 W, what the idle GPU holding a context draws: power cannot tell it from a kernel that never ends."""
    d = diagnose(h200("spin"))
    root = d.findings[0]
    assert (root.cause, d.verdict.value) == ("gpu.long_kernel", "slow")
    assert "idle power (124 W of 700 W)" in root.summary, root.summary
    assert (root.where.file, root.where.line) == ("/gpucheck/job.py", 13)  # torch.cuda.synchronize()


def test_on_an_h200_a_matmul_loop_is_a_long_kernel_at_working_power():
    d = diagnose(h200("matmul"))
    root = d.findings[0]
    assert (root.cause, d.verdict.value) == ("gpu.long_kernel", "slow")
    assert "624 W of 700 W" in root.evidence[0] and "idle power" not in root.summary


def test_on_an_h200_a_host_deadlock_holding_20_gib_is_hung_with_the_gpu_idle():
    d = diagnose(h200("idle_holder"))
    root = d.findings[0]
    assert (root.cause, d.verdict.value) == ("code.deadlock", "hung")
    assert any("at 0% on every read" in e and "host side is stuck" in e for e in root.evidence), root.evidence
    (used,) = h200("idle_holder").gpu.processes
    assert used.in_job and used.used_mib > 20 * 1024


def test_kernel_oom_and_nfs_lines_name_the_victim_and_the_server():
    kills = tuple(kmsg("kmsg-oom-global-with-pgtables.txt"))
    d = diagnose(evidence("unknown_still_points_at_the_line", kernel=kills, known_pids=(7899,)))
    oom = d.findings[0]
    assert oom.cause == "memory.oom" and "pid 7899 (python)" in oom.summary
    elsewhere = diagnose(evidence("unknown_still_points_at_the_line", kernel=kills))  # another user's python
    assert all(f.cause != "memory.oom" for f in elsewhere.findings)
    back = diagnose(
        evidence("unknown_still_points_at_the_line", kernel=tuple(kmsg("kmsg-nfs-not-responding-and-hung-task.txt")))
    )
    assert all(f.cause != "io.storage_wait" or "ease" not in f.summary for f in back.findings)  # it came back
    down = tuple(e for e in kmsg("kmsg-nfs-not-responding-and-hung-task.txt") if e.kind == "nfs_down")
    nfs = diagnose(evidence("d_state_process_is_captured_without_hanging", kernel=down)).findings[0]
    assert nfs.cause == "io.storage_wait" and "NFS server ease" in nfs.summary and "state D" in nfs.summary


def test_a_crash_with_a_kernel_oom_line_names_the_victim():
    findings = diagnose_crash(
        -9, "", pid=123, kernel=tuple(kmsg("kmsg-oom-killed-older-format-reaper.txt")), known_pids=(15925,)
    )
    assert findings[0].cause == "memory.oom" and "pid 15925 ((resolved))" in findings[0].summary
    xid = diagnose_crash(
        1,
        "RuntimeError: CUDA error: unspecified launch failure",
        pid=1797828,
        kernel=tuple(kmsg("kmsg-nvidia-xid13-xid109-ctime.txt")),
    )
    assert xid[0].cause == "gpu.fault" and "Xid 109" in xid[0].summary


def test_release_wait_by_device_memory_without_per_process_figures():
    class Sysfs:
        name, driver, library, per_process = "sysfs", None, None, False
        reads = iter([9000.0, 6000.0, 1100.0])

        def read(self):
            return Reading((GpuDevice(0, "card0", "amd", memory_used_mib=next(self.reads)),))

    clock = iter(range(100))
    rel = wait_release(Sysfs(), [1], {0: 1000.0}, 10.0, now=lambda: float(next(clock)), sleep=lambda s: None)
    assert rel.released and rel.how == "device memory" and rel.seconds == 3.0  # the third read (t=1, 2, 3)


# --- real processes, with the fake GPU at the boundary ------------------------------------------------------------


def test_on_an_h200_cuda_in_a_forked_worker_is_named_at_the_datasets_line_with_spawn_as_the_fix():
    """The worker's own traceback (torch's "Original Traceback", printed after the main process raised it again)
    names the line: the dataset's __getitem__, not the main loop's `for`."""
    text = (GPU / "h200" / "fork-after-cuda-output.log").read_text()
    (root, *_) = diagnose_crash(1, text, pid=804)
    assert root.cause == "fork.after_cuda" and "fork" in root.summary, root.summary
    assert (root.where.file, root.where.line, root.where.function) == ("/gpucheck/job.py", 75, "__getitem__")
    assert any("spawn" in f for f in root.fix)
    assert any(
        "Cannot re-initialize CUDA in forked subprocess" in e and "in DataLoader worker 0" in e for e in root.evidence
    ), root.evidence


def test_a_worker_error_with_no_line_of_the_jobs_own_keeps_the_main_loops_line():
    """default_collate failing in a worker: every frame of the worker's traceback is torch's. The error is the
    worker's; the line is the main process's `for` (the only line of the job's own code there is)."""
    text = """Traceback (most recent call last):
  File "/job/train.py", line 40, in <module>
    for b in loader:
  File "/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 741, in __next__
    data = self._next_data()
RuntimeError: Caught RuntimeError in DataLoader worker process 0.
Original Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 358, in _worker_loop
    data = fetcher.fetch(index)
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/collate.py", line 212, in default_collate
    return torch.stack(batch, 0, out=out)
RuntimeError: stack expects each tensor to be equal size, but got [3] at entry 0 and [4] at entry 1
"""
    (root, *_) = diagnose_crash(1, text, pid=7)
    assert (root.where.file, root.where.line) == ("/job/train.py", 40), root.where
    assert any("stack expects each tensor" in e and "in DataLoader worker 0" in e for e in root.evidence)


def test_a_traceback_that_starts_mid_line_after_another_streams_unfinished_line_is_read():
    """stdout and stderr reach the log through two pipes: a job's `step 5` (its newline a write of its own, unbuffered)
    can land just before the traceback's first line, on the same line; a progress bar's last frame (no newline) does
    the same on one stream. Seen in CI: the crash was 'no known failure text' with the whole traceback in the tail."""
    worker = """Traceback (most recent call last):
  File "/job/train.py", line 18, in <module>
    for step, _ in enumerate(loader):
  File "/venv/lib/python3.11/site-packages/torch/_utils.py", line 794, in reraise
    raise exception
ValueError: Caught ValueError in DataLoader worker process 0.
Original Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 374, in _worker_loop
    data = fetcher.fetch(index)
  File "/job/train.py", line 14, in __getitem__
    raise ValueError(f"sample {i}: shard-0042.bin is truncated")
ValueError: sample 6: shard-0042.bin is truncated
"""
    bar = "epoch 0:  10%|#         | 2/20\repoch 0:  45%|####5     | 9/20 [00:01<00:02,  5.01it/s]"  # its last frame
    original = worker.index("Original Traceback")
    for log in ("step 0\nstep 5" + worker, bar + worker, worker[:original] + "step 6" + worker[original:]):
        (root, *_) = diagnose_crash(1, log + "\n", pid=7)
        assert (root.where.file, root.where.line, root.where.function) == ("/job/train.py", 14, "__getitem__"), log
        assert "shard-0042.bin is truncated" in root.summary
    ranked = "[rank0]: step 5[rank1]: Traceback (most recent call last):\n" + "".join(
        f"[rank1]: {ln}\n"
        for ln in ('  File "/job/train.py", line 31, in train', "    loss = step(batch)", "ValueError: x")
    )
    assert [(r.rank, r.frame.line if r.frame else None) for r in tracebacks(ranked)] == [(1, 31)]  # rank 1's, not 0's
    # an exception whose message quotes a traceback's first line is that traceback's end, not a new one
    quoted = (
        worker[: worker.index("ValueError: Caught")] + "RuntimeError: remote: Traceback (most recent call last): x\n"
    )
    assert [r.exception for r in tracebacks(quoted)] == ["RuntimeError: remote: Traceback (most recent call last): x"]

"""Rules on recorded evidence: captures of the real hangs in tests/scenarios, replayed without processes.

Recorded with `HW_RECORD_DIR=tests/fixtures/evidence pytest tests/e2e/test_inspect_scenarios.py`.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import marker

from hangwatch.diagnose import diagnose
from hangwatch.diagnose.assemble import build_incident
from hangwatch.evidence_io import evidence_from_dict, evidence_to_dict
from hangwatch.fixes import CYCLE_FIX, FULL_BUFFER_FIX, SELF_WAIT_FIX
from hangwatch.records.evidence import C10dWait, Evidence, Frame, ProcessEvidence
from hangwatch.records.incident import Incident

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "evidence"

# fixture -> (cause, verdict, scenario script, marker tag)
EXPECTED = {
    "dataloader_worker_stuck-dl_worker_blocked": (
        "dataloader.worker_stuck",
        "hung",
        "dl_worker_blocked.py",
        "HANG-HERE",
    ),
    "dataloader_worker_stuck-dl_worker_spin": ("dataloader.worker_stuck", "hung", "dl_worker_spin.py", "HANG-HERE"),
    "dataloader_worker_stuck-dl_iterable": ("dataloader.worker_stuck", "hung", "dl_iterable.py", "HANG-HERE"),
    "dataloader_worker_stuck-dl_collate": ("dataloader.worker_stuck", "hung", "dl_collate.py", "HANG-HERE"),
    "batch_lost": ("dataloader.batch_lost", "hung", "dl_batch_lost.py", "HANG-HERE"),
    "fork_inherited_lock": ("fork.inherited_lock", "hung", "fork_lock.py", "HANG-HERE"),
    "busy_loop": ("code.busy_loop", "hung", "busy_loop.py", "HANG-HERE"),
    "network_wait": ("io.network_wait", "hung", "network_wait.py", "HANG-HERE"),
    "stopped_process_is_reported_and_left_stopped": ("process.stopped", "stopped", "sleeper.py", "HANG-HERE"),
    "unknown_still_points_at_the_line": ("unknown", "hung", "sleeper.py", "HANG-HERE"),
    "child_wait_queue_join_before_get": ("child.wait", "hung", "mp_queue_join.py", "HANG-HERE"),
    "output_buffered": ("output.buffered", "progressing", "output_buffered.py", None),
    "compile_in_progress_is_not_hung": ("compile.in_progress", "slow", "compile_job.py", "HANG-HERE"),
    # the same compile caught as the writers of the pipe it reads (inductor's probes) exit, and as a child it
    # waits for exits: the wait ends (end of file, the child's status), no hang proven by a holder gone
    "compile_pipe_writers_exit_during_the_look": ("compile.in_progress", "slow", "compile_job.py", "HANG-HERE"),
    "compile_child_exits_during_the_look": ("compile.in_progress", "slow", "compile_job.py", "HANG-HERE"),
    # a recompile under `run --no-autobeat`: main reads the pipe of a g++ that appeared in the last sample (its
    # cc1plus compiling); the holder seen once is not "blocked for the whole window", its chain (g++ -> wait4 ->
    # cc1plus) ends unread, and the rule's unproven hang gives way to the chain (was hung process.waits_on, killed)
    # the same recompile: main reads the pipe of a cc1plus at 100% CPU that the capture had not taken in yet; the
    # wait is the compile (was process.waits_on `waiting` first, by its own proof of work, over the compile)
    "compile_the_compiler_it_reads_from_is_named_the_compile": (
        "compile.in_progress",
        "slow",
        "compile_midway.py",
        "RECOMPILE-HERE",
    ),
    # the same recompile: the pipe's writer works (CPU, bytes) but its command line cannot be read yet (a process the
    # capture had not taken in): the generic wait (process.waits_on `waiting`, by its proof of work) yields the name
    # to the compile at the same line, and its proof moves there (was a `slow` incident, 1 fresh-clone CI in ~10)
    "compile_a_working_writer_with_no_name_yet_is_the_compile": (
        "compile.in_progress",
        "slow",
        "compile_midway.py",
        "RECOMPILE-HERE",
    ),
    "compile_a_compiler_seen_once_is_not_a_stuck_holder": (
        "compile.in_progress",
        "slow",
        "compile_midway.py",
        "RECOMPILE-HERE",
    ),
    "distributed_peer_stuck_names_culprit_rank": (
        "distributed.peer_stuck",
        "hung",
        "dist_peer.py",
        "HANG-HERE:culprit",
    ),
    "rendezvous_wait": ("distributed.rendezvous_wait", "waiting", "dist_rendezvous.py", "HANG-HERE"),
    "d_state_process_is_captured_without_hanging": ("io.storage_wait", "hung", "dstate.py", None),
    "deadlock": ("code.deadlock", "hung", "deadlock.py", None),
    "child_wait_subprocess": ("child.wait", "hung", None, None),
    "child_wait_os_system": ("child.wait", "hung", "os_system.py", "HANG-HERE"),
    "network_wait_in_a_prefetch_thread": ("io.network_wait", "hung", "thread_prefetch.py", "HANG-HERE"),
    "non_python_process": ("unknown", "hung", None, None),
    # a chain of timers that ends by itself (the twin of the zoo's sigterm_exit_joins_rearming_timer), read under
    # load: four samples caught four Timer threads, three of them before py-spy read a frame of them; the timer named
    # ended in the look (was hung at --min-stall: a false kill of the e2e twin in CI)
    "an_exit_joined_to_a_chain_of_timers_caught_between_two": ("code.deadlock", "slow", "exit_timers_stop.py", None),
    # exit_timers_daemon.py 30 (the twin: a one-shot Timer the exit waits for beside a daemon heartbeat that re-arms),
    # its newest sample edited to what CI read under load at 0a339d1 as the Timer fired (no run here caught that
    # instant in 25 tries): 'Thread-2' out of its wait, running its function at Timer.run:1401. It was hung `unknown`
    # at threading._shutdown, and the clock killed the healthy job; a Timer that fired is a change, as a thread's end
    "an_exit_joined_to_a_one_shot_timer_read_as_it_fires": ("unknown", "slow", None, None),
    "same_job_unbuffered_is_not_flagged": ("unknown", "progressing", None, None),
    "lock_wait_flock": ("io.lock_wait", "hung", "filelock_wait.py", "HANG-HERE:flock"),
    "deadlock_mp_lock_bare": ("code.deadlock", "hung", "dl_mp_lock_bare.py", "HANG-HERE"),
    "lost_work_inferred": ("child.lost_work", "hung", "pool_lost.py", "HANG-HERE"),
    "worker_sleeping_in_getitem": ("dataloader.worker_slow", "slow", "dl_worker_sleepy.py", "SLEEP-HERE"),
    "dataloader_shutdown": ("dataloader.shutdown", "slow", "dl_shutdown_wait.py", "SHUTDOWN-HERE"),
    "toplevel_loop_one_line_in_every_sample": ("code.busy_loop", "slow", None, None),  # (its samples forced: below)
    "distributed_p2p_send_cycle": ("distributed.peer_stuck", "hung", "dist_p2p.py", "HANG-HERE:send0"),
    # bench/zoo cases (their lines: below): a `python -c` child waits for the flock its parent holds while the
    # parent waits for it (was named at no place), and an asyncio loop awaiting a child that fills a pipe only the
    # loop's process could read (was `unknown`: the loop's process has two threads, so the loop is not proven)
    "flock_cycle_parent_waits_its_python_c_child": ("io.lock_wait", "hung", None, None),
    # bench/zoo/sampler_infinite_loop.py (2026-12-06): main spins in a sampler's loop whose condition cannot change
    "a_sampler_spinning_in_a_loop_whose_condition_cannot_change": ("code.busy_loop", "hung", None, None),
    "asyncio_wait_on_a_child_filling_its_pipe": ("process.waits_on", "hung", None, None),
    # the interpreter's exit joins a non-daemon thread: asleep on one bounded timer (a last flush after SIGTERM:
    # was hung, and killed at --min-stall), or polling for a stop event nothing can set any more (hung, as before)
    "exit_joins_a_thread_asleep_on_a_bounded_timer": ("code.deadlock", "slow", None, None),
    "exit_joins_a_thread_polling_for_a_stop_nobody_sets": ("code.deadlock", "hung", None, None),
    # bench/zoo/nondaemon_sleep_poller_at_exit.py and its twin (2026-11-30): a heartbeat that sleeps between reads of
    # a stop flag nobody sets (its file binds the flag only to threading.Event(): proven, hung; it was a known miss,
    # slow, and hung unproven under inspect before that); the same on a multiprocessing event a living child sets
    # (called hung under inspect before: now slow)
    "exit_joins_a_heartbeat_sleeping_between_reads_of_a_stop_nobody_sets": ("code.deadlock", "hung", None, None),
    "exit_joins_a_heartbeat_whose_multiprocessing_stop_a_living_child_sets": ("code.deadlock", "slow", None, None),
    # bench/zoo cases of 2026-11-29, later (their places: below). A thread waits for another thread's end or result
    # in a process where no thread can run: the place is the thread whose own wait ends the others (was main's
    # `.result()` and `asyncio.run()`); the twins, the task computing and the executor's thread fed late, are not hung.
    "a_task_blocked_on_a_leaked_semaphore_behind_a_future": ("code.deadlock", "hung", None, None),
    "a_task_computing_while_it_holds_a_semaphore": ("unknown", "slow", None, None),
    "asyncio_run_exit_joins_an_executor_thread_blocked_in_get": ("code.deadlock", "hung", None, None),
    "asyncio_run_exit_joins_an_executor_thread_fed_late": ("unknown", "slow", None, None),
    # a parent in accept() while the child that will connect computes (was hung, unproven: killed at --min-stall
    # under run once the job had made progress), and while the child that was to connect is a crashed zombie
    "accept_while_the_child_that_connects_computes": ("io.network_wait", "slow", None, None),
    "accept_for_a_child_that_crashed": ("io.network_wait", "hung", None, None),
    # the exit joins an executor's listener waiting on a stop event: set by a flushing thread that computes (was hung,
    # for the clock), or only by an atexit handler that runs after the join (hung); a thread awaits a coroutine's
    # future on an event loop whose own thread sleeps on the coroutine's timer (was hung: only a main thread's poll
    # counted), or whose thread stopped (hung, proven: no thread is left to resolve it)
    "exit_joins_a_listener_whose_stop_a_working_thread_sets": ("code.deadlock", "slow", None, None),
    "exit_joins_a_listener_whose_stop_only_atexit_sets": ("code.deadlock", "hung", None, None),
    "a_future_of_a_loop_thread_asleep_on_its_timer": ("unknown", "slow", None, None),
    "a_future_of_a_loop_thread_that_stopped": ("code.deadlock", "hung", None, None),
    # bench/zoo/like_slow_download.py with its stdout in a file (as under nohup): a download that moves, its log
    # still; the download is named, not the buffered log (the state's "working" covers bytes, not only CPU)
    "a_slow_download_with_its_stdout_in_a_file": ("io.network_wait", "slow", None, None),
    # bench/zoo/mp_pipe_both_send_large.py (a duplex multiprocessing.Pipe, both sides sending a large message) and
    # its twin, whose child computes before it reads: a ring of two full sockets, proven; a wait on a worker
    "a_ring_of_two_processes_each_writing_to_a_full_socket": ("process.waits_on", "hung", None, None),
    "a_full_socket_whose_reader_computes_before_it_reads": ("unknown", "slow", None, None),
    # bench/zoo/spawn_module_level_queue_not_shared.py: a spawned consumer's module-level queue is its own copy
    "a_spawned_consumer_reading_its_own_module_level_queue": ("process.waits_on", "hung", None, None),
    # a timed wait's timer read from the kernel (a futex wait's absolute deadline; the least left of a poll's): the exit
    # joins a threading.Timer due in a day (proven) or within the bounds (alive); an event loop's next timer (a backoff
    # without a cap) past the bounds (proven), or capped
    "exit_joins_a_timer_due_in_a_day": ("code.deadlock", "hung", None, None),
    "exit_joins_a_timer_due_within_the_bounds": ("code.deadlock", "slow", None, None),
    "an_event_loop_whose_next_timer_is_past_the_bounds": ("code.deadlock", "hung", None, None),
    "an_event_loop_whose_next_timer_is_within_the_bounds": ("unknown", "slow", None, None),
    # an event loop polls its own wake-up socket and one to a child that answers late (zoo like_asyncio_slow_server)
    "an_event_loop_polling_a_child_socket_and_its_own": ("unknown", "slow", None, None),
    # a thread holds the GIL through a native sleep (ctypes.PyDLL): main waits for the GIL, woken every 5 ms (was
    # `unknown`, slow: "woke 233 times"); the sleep's timer (past the bounds: proven, at the call; 40 s: slow)
    "a_thread_holding_the_gil_in_a_native_sleep_of_a_day": (
        "process.waits_on",
        "hung",
        "gil_held_native_sleep.py",
        "HANG-HERE",
    ),
    "a_thread_holding_the_gil_in_a_native_sleep_of_40_s": ("unknown", "slow", None, None),
    # a DataLoader worker killed by SIGKILL, a zombie its parent has not reaped, before torch's check of its workers
    # raises (was `unknown`, and a hung probe-data cell in CI: a crash on its way, named at the loop that raises)
    "a_worker_killed_before_torch_checks_its_workers": (
        "dataloader.worker_died",
        "slow",
        "dl_worker_killed_unheard.py",
        "HANG-HERE",
    ),
    # a QueueListener started twice (python/cpython#132106): stop() joins the thread that never gets its sentinel;
    # both waits are the library's, and every thread of the process sleeps in a private futex with no timeout (was
    # unproven, left to the clock)
    "a_queue_listener_started_twice_joined_at_stop": (
        "code.deadlock",
        "hung",
        "queue_listener_started_twice.py",
        "HANG-HERE",
    ),
    # a lock-order ring through logging (storaged-project/blivet#1500): main logs holding the state's lock, the
    # uploader's log call formats the state inside the handler's lock; no namer knows the shape: code.deadlock from
    # the chain (was process.waits_on, "no living thread holds it", though the uploader holds it)
    "a_log_call_inside_a_lock_whose_repr_takes_another": (
        "code.deadlock",
        "hung",
        "logging_repr_lock_order.py",
        "HANG-HERE",
    ),
    # two gloo ranks make a group of both under names that differ (rank 0 made one of its own first,
    # pytorch/pytorch#173608): a ring of the ranks' group making, proven (was unknown, by the clock)
    "ranks_making_one_group_under_names_that_differ": (
        "distributed.peer_stuck",
        "hung",
        "dist_group_names.py",
        "HANG-HERE",
    ),
    # a native child (sh's `read`, as unzip's overwrite question) started without stdin= asks on the job's terminal:
    # a person's edge, proven, named at the line that started it (was child.wait, unproven, for the clock); its twin,
    # whose question a thread of the job answers once its loop's deadline passes (a ring through the pipe that
    # process holds, one thread of it alive: slow; was hung, unproven, for the clock)
    "a_native_child_asking_on_the_jobs_terminal": (
        "process.waits_for_input",
        "hung",
        "native_child_prompt.py",
        "HANG-HERE",
    ),
    "a_native_childs_question_a_thread_answers_after_its_deadline_loop": (
        "child.wait",
        "slow",
        "native_child_prompt.py",
        "ANSWER-HERE",
    ),
    # one long call (a sum over a huge range, in C) once per turn of a `while` loop whose locals stay while it runs:
    # computing, in words of what was read (it was "a CPU-bound loop whose variables advance")
    "a_long_call_once_per_turn_of_a_loop_whose_locals_stay": ("code.computing", "slow", "long_call.py", "LOOPED-CALL"),
    # main in pause() with a SIGTERM handler; two children asleep for a day, a shell that sleeps 25 s then signals it
    # (bench/zoo/like_pause_sigterm_arrives_during_pause.py): slow, through the shell (was hung, through a sleeper)
    "a_pause_a_childs_shell_signals_after_a_short_sleep": ("process.waits_on", "slow", None, None),
    # a TCPStore gossip whose ranks wait in store.get for keys nobody sets (pytorch/pytorch#67972): no cause named,
    # unproven; placed where main's chain stops, rank 0's get (was main's mp.spawn line)
    "a_rank_waiting_in_a_store_get_for_a_key_nobody_sets": (
        "unknown",
        "hung",
        "store_get_key_nobody_sets.py",
        "HANG-HERE",
    ),
    # main holds a FileLock and waits for a download future; each download thread's own FileLock on the same path
    # polls (LOCK_NB every 50 ms, no timeout) against the process's hold (tox-dev/filelock#315, bench/zoo): a thread
    # in that loop lets go of nothing, so nobody can release it (was slow unknown: the pollers' wake-ups kept it
    # alive); its twin, main waiting inside the lock for a thread that computes, is untouched
    "pool_threads_poll_a_file_lock_their_own_process_holds": ("code.deadlock", "hung", None, None),
    # the twin of a flock kept by a forked child: the child compresses (`zlib.compress`, the GIL released) on one line
    # at full CPU, read in a 1-s window with few wake-ups: "unknown", so the clock killed the healthy job at
    # --min-stall. A thread at full CPU inside one call is alive (working, no proof: a native spin looks the same)
    "a_lock_holder_at_full_cpu_in_one_native_call": (
        "io.lock_wait",
        "slow",
        "flock_kept_by_forked_child.py",
        "HANG-HERE",
    ),
    "pool_threads_poll_a_file_lock_held_while_main_waits_for_a_working_thread": (
        "code.computing",
        "progressing",
        None,
        None,
    ),
    # main in `while True: time.sleep(0.5)` (a loop with no way out, proven) while the helper it started streams a
    # file: alive by the helper's work, with or without namers (``test_a_process_that_waits_on_nothing_...``)
    "a_main_looping_for_ever_while_its_child_streams": ("unknown", "slow", "main_sleeps_child_streams.py", None),
    # zoo cases (their lines: test_a_wait_only_its_own_blocked_process_could_end_is_proven_and_its_twin_is_alive)
    "a_handler_lock_held_by_a_writer_of_a_pipe_only_main_drains": ("code.deadlock", "hung", None, None),
    "a_handler_lock_held_while_a_thread_opens_the_pipes_reader": ("unknown", "slow", None, None),
    "a_loopback_request_in_the_accept_queue_of_its_own_listener": ("io.network_wait", "hung", None, None),
    "a_loopback_request_whose_server_thread_accepts_late": ("io.network_wait", "slow", None, None),
    # a DataLoader worker waits on a future its own pool thread completes after a 4-s read (a healthy job)
    "a_workers_future_its_pool_thread_completes_after_a_nap": (
        "dataloader.worker_stuck",
        "slow",
        "dl_fork_inherited_executor.py",
        "HANG-HERE",
    ),
    # the same keep-alive loop while a thread of it waits for a peer outside the job to answer on a socket
    "a_main_looping_for_ever_while_a_thread_awaits_a_peer": (
        "unknown",
        "slow",
        "main_sleeps_thread_awaits_a_peer.py",
        "KEEPS-ALIVE",
    ),
}


def load(name: str) -> Evidence:
    return evidence_from_dict(json.loads((FIXTURES / f"{name}.json").read_text()))


def test_every_fixture_has_an_expectation():
    assert {p.stem for p in FIXTURES.glob("*.json")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_rule_on_recorded_evidence(name):
    cause, verdict, script, tag = EXPECTED[name]
    d = diagnose(load(name))
    assert (d.findings[0].cause, d.verdict.value) == (cause, verdict), d.findings[0]
    if script and tag:
        _, line = marker(script, tag)
        w = d.findings[0].where
        assert w is not None
        assert (Path(w.file or "").name, w.line) == (script, line)


# Every recorded wait through multiprocessing's code, with its frames moved into `multiprocess` (the dill fork HF
# datasets' map(num_proc=N) and pathos use, installed in site-packages): the same finding, verdict and line. Before,
# a pool worker killed mid-task under `multiprocess` was a generic wait declared by the clock (its workers' frames,
# in site-packages, were not the library's wait for work).
STDLIB_MP = "/lib/python3.11/multiprocessing/"
MULTIPROCESSING_FIXTURES = sorted(
    n for n in EXPECTED if STDLIB_MP in (FIXTURES / f"{n}.json").read_text() and EXPECTED[n][2] is not None
)


@pytest.mark.parametrize("name", MULTIPROCESSING_FIXTURES)
def test_the_same_waits_through_multiprocess_the_dill_fork_read_the_same(name):
    assert len(MULTIPROCESSING_FIXTURES) >= 4
    text = (FIXTURES / f"{name}.json").read_text()
    moved = text.replace(STDLIB_MP, "/lib/python3.11/site-packages/multiprocess/")
    assert moved != text and STDLIB_MP not in moved
    before, after = diagnose(load(name)), diagnose(evidence_from_dict(json.loads(moved)))
    assert (after.verdict, after.findings[0].cause) == (before.verdict, before.findings[0].cause), after.findings[0]
    assert after.findings[0].where == before.findings[0].where
    assert after.findings[0].proof == before.findings[0].proof


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_evidence_round_trips_through_json(name):
    ev = load(name)
    assert evidence_from_dict(json.loads(json.dumps(evidence_to_dict(ev)))) == ev


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_incident_round_trips_through_json(name):
    ev = load(name)
    incident = build_incident(ev, diagnose(ev))
    again = Incident.from_dict(json.loads(incident.to_json()))
    assert again == incident
    d = incident.to_dict()
    assert list(d)[:8] == [
        "schema",
        "verdict",
        "detected_at",
        "last_progress",
        "attempt",
        "action",
        "processes",
        "findings",
    ]
    assert set(d["findings"][0]) >= {"cause", "confidence", "summary", "where", "evidence", "fix"}
    assert [f["confidence"] for f in d["findings"]] == sorted((f["confidence"] for f in d["findings"]), reverse=True)


# --- given / when / then: the evidence changed in one respect, the diagnosis follows -------------


def _grow_stdout(ev: Evidence) -> Evidence:
    procs = []
    for p in ev.processes:
        samples = tuple(replace(s, stdout_size=1000 * i) for i, s in enumerate(p.samples))
        procs.append(replace(p, samples=samples))
    return replace(ev, processes=tuple(procs))


def test_spinning_process_whose_log_grows_is_not_a_busy_loop():
    d = diagnose(_grow_stdout(load("busy_loop")))
    assert all(f.cause != "code.busy_loop" for f in d.findings)
    assert d.verdict.value == "progressing"


def test_buffered_job_that_sets_pythonunbuffered_is_not_flagged():
    ev = load("output_buffered")
    procs = tuple(replace(p, info=replace(p.info, env={**p.info.env, "PYTHONUNBUFFERED": "1"})) for p in ev.processes)
    d = diagnose(replace(ev, processes=procs))
    assert all(f.cause != "output.buffered" for f in d.findings)


def test_buffered_job_started_with_dash_u_is_not_flagged():
    ev = load("output_buffered")
    procs = tuple(
        replace(p, info=replace(p.info, cmdline=(p.info.cmdline[0], "-u", *p.info.cmdline[1:]))) for p in ev.processes
    )
    assert all(f.cause != "output.buffered" for f in diagnose(replace(ev, processes=procs)).findings)


def test_fork_lock_without_a_parent_thread_is_plain_worker_stuck():
    ev = load("fork_inherited_lock")
    main = ev.root_pid

    def strip_threads(p):  # the parent now has only its main thread and DataLoader's own threads
        if p.info.pid != main:
            return p
        samples = tuple(
            replace(s, threads=tuple(t for t in s.threads if t.name != "metrics-uploader")) for s in p.samples
        )
        return replace(p, samples=samples)

    d = diagnose(replace(ev, processes=tuple(strip_threads(p) for p in ev.processes)))
    assert d.findings[0].cause == "dataloader.worker_stuck"
    assert all(f.cause != "fork.inherited_lock" for f in d.findings)


def test_peer_stuck_with_every_rank_in_the_collective_is_not_reported():
    ev = load("distributed_peer_stuck_names_culprit_rank")
    victim = next(p for p in ev.processes if p.info.rank == 0 and p.info.role.value == "rank")
    procs = tuple(replace(p, samples=victim.samples) if p.info.role.value == "rank" else p for p in ev.processes)
    d = diagnose(replace(ev, processes=procs))
    assert all(f.cause != "distributed.peer_stuck" for f in d.findings)


@pytest.mark.parametrize(
    ("path", "library"),
    [
        ("/tmp/torchinductor_root/se/csemwqts2kr252tcenyxzqk5opzyxup2m3xy6mhom5kazau5amow.py", True),
        ("/scratch/cache/ab/cabcdefghijklmnopqrstuvwxyz0123456789abcdefghij.py", True),
        ("/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", True),
        ("/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py", True),
        ("/venv/bin/torchrun", True),
        ("<frozen runpy>", True),
        ("/home/me/project/train.py", False),
        ("/home/me/project/bin/train.py", False),
    ],
)
def test_user_code_vs_library(path, library):
    from hangwatch.signatures import is_library_file

    assert is_library_file(path) is library


@pytest.mark.parametrize("zombie", [None, "launcher", "rank"])
def test_a_rank_missing_from_the_collective_is_named(zombie):
    """Rank 1 is not running here. A zombie beside the ranks (their launcher's child) is the rank that exited; a
    zombie child of a running rank (a worker, a helper) says nothing of rank 1: it was "exited (crashed?) and will
    never arrive" from any zombie of the job."""
    from hangwatch.records.evidence import Role

    ev = load("distributed_peer_stuck_names_culprit_rank")
    procs = tuple(p for p in ev.processes if p.info.rank != 1)  # rank 1 crashed, or lives on another node
    if zombie is not None:
        gone = next(p for p in ev.processes if p.info.rank == 1)
        parent = gone.info.ppid if zombie == "launcher" else next(p.info.pid for p in procs if p.info.rank == 0)
        info = replace(gone.info, ppid=parent, rank=None, role=Role.CHILD, pid=gone.info.pid + 100)
        samples = tuple(replace(s, state="Z", threads=()) for s in gone.samples)
        procs += (replace(gone, info=info, samples=samples, locals=(), waits=(), c10d=None),)
    d = diagnose(replace(ev, processes=procs))
    root = d.findings[0]
    assert (root.cause, d.verdict.value) == ("distributed.peer_stuck", "hung")
    assert root.where is not None and root.where.rank == 1 and root.where.file is None
    assert any("ranks not running on this node: [1]" in e for e in root.evidence)
    assert ("crashed?" in root.summary) is (zombie == "launcher"), root.summary


def test_peer_stuck_cites_each_ranks_last_progress():
    ev = load("distributed_peer_stuck_names_culprit_rank")
    ev = replace(ev, rank_progress=((0, ev.started_at - 3, 41), (1, ev.started_at - 14, 38)))
    root = diagnose(ev).findings[0]
    assert (
        "last progress by rank, oldest first: rank 1 step 38 (14 s before), rank 0 step 41 (3 s before)"
        in root.evidence
    )


def test_a_rule_that_raises_fails_loudly_in_strict_mode_and_is_skipped_otherwise(monkeypatch):
    ev = evidence_from_dict(json.loads(next(FIXTURES.glob("*.json")).read_text()))

    def broken(scene):
        raise RuntimeError("rule bug")

    with pytest.raises(RuntimeError, match="rule bug"):
        diagnose(ev, rules=(broken,))  # conftest sets HANGWATCH_STRICT_RULES for the whole suite
    monkeypatch.delenv("HANGWATCH_STRICT_RULES")
    assert diagnose(ev, rules=(broken,)).findings  # users get the other rules' findings, not a crash


def test_a_worker_seen_in_one_sample_is_never_called_stuck():
    """A capture cut short on a loaded machine (a Lightning epoch's workers replaced mid-capture) saw a worker
    in one sample: that says where it is, never that it stays there. The same worker over the full window is
    stuck."""
    ev = load("dataloader_worker_stuck-dl_worker_blocked")
    assert diagnose(ev).root.cause == "dataloader.worker_stuck"
    procs = tuple(
        replace(p, samples=p.samples[:1]) if p.info.role.value == "dataloader_worker" else p for p in ev.processes
    )
    d = diagnose(replace(ev, processes=procs))
    assert all(f.cause != "dataloader.worker_stuck" for f in d.findings), [(f.cause, f.summary) for f in d.findings]
    assert d.verdict.value != "hung", d.root
    slow = [f for f in d.findings if f.cause == "dataloader.worker_slow"]
    assert slow and "too briefly to say that it stays there" in slow[0].summary, d.findings


def test_a_stack_read_cut_short_still_points_at_the_users_line():
    """A read of a busy target can come back cut short, deep in torch with the user's frames missing (a
    clean-clone CI run's compile capture named no file): the newest stack that has a user frame says where."""
    from hangwatch.signatures import is_user

    ev = load("compile_in_progress_is_not_hung")

    def cut(p):
        last = p.samples[-1]
        threads = tuple(replace(t, frames=tuple(f for f in t.frames if not is_user(f))) for t in last.threads)
        return replace(p, samples=(*p.samples[:-1], replace(last, threads=threads)))

    d = diagnose(replace(ev, processes=tuple(cut(p) for p in ev.processes)))
    root = d.root
    assert root.cause == "compile.in_progress" and root.where is not None, root
    _, line = marker("compile_job.py")  # the recording's paths are the machine's that recorded it
    assert (Path(root.where.file or "").name, root.where.line) == ("compile_job.py", line), root.where


def test_a_compile_is_named_by_its_namer_and_judged_by_what_main_and_its_compilers_do():
    """[1/5]: compile.in_progress names main in torch.compile and sets no verdict; the verdict stage judges it. The
    recording (main moves bytes, its compiler runs at 100% CPU) is slow with the state's proof of work; the same
    main frozen (no CPU, the same stack, no bytes) with no compiler of its own is hung without proof, for
    --min-stall to decide."""
    from hangwatch.diagnose.compile import compile_rule
    from hangwatch.diagnose.scene import Scene

    ev = load("compile_in_progress_is_not_hung")
    assert [h.verdict for h in compile_rule(Scene.of(ev))] == [None]
    d = diagnose(ev)
    assert (d.verdict.value, d.root.cause) == ("slow", "compile.in_progress"), d.root
    assert d.root.proves_work and "its compiler cc1plus" in d.root.summary, d.root
    main = ev.processes[0]
    frozen = tuple(replace(main.samples[0], at=x.at, state="S") for x in main.samples)
    d2 = diagnose(replace(ev, processes=(replace(main, samples=frozen),)))
    assert (d2.verdict.value, d2.root.cause, d2.root.proof) == ("hung", "compile.in_progress", None), d2.root
    assert "with no CPU use or movement" in d2.root.summary, d2.root.summary
    # the same main at full CPU in one long native call (the same stack in every sample, no compiler): alive
    hz = os.sysconf("SC_CLK_TCK")
    s0 = main.samples[0]

    def running(x):
        dt = x.at - s0.at
        threads = tuple(
            replace(t, state="R", cpu_ticks=(t.cpu_ticks or 0) + int(dt * hz)) if t.tid == main.info.pid else t
            for t in s0.threads
        )
        return replace(s0, at=x.at, state="R", cpu_seconds=(s0.cpu_seconds or 0) + dt, threads=threads)

    d3 = diagnose(replace(ev, processes=(replace(main, samples=tuple(running(x) for x in main.samples)),)))
    assert (d3.verdict.value, d3.root.cause) == ("slow", "compile.in_progress"), d3.root
    assert any("used 100% CPU; what it does was not read" in e for e in d3.root.evidence), d3.root.evidence
    assert not d3.root.proves_hang and not d3.root.proves_work, d3.root  # alive inside one call: no proof either way


@pytest.mark.parametrize(
    ("name", "verdict", "proof_says"),
    [
        ("stopped_process_is_reported_and_left_stopped", "stopped", "(stopped) in all"),
        ("child_wait_subprocess", "hung", None),
    ],
)
def test_the_process_namers_name_and_the_state_and_the_chain_judge(name, verdict, proof_says):
    """[1/5]: process.stopped and child.wait set no verdict and make no proof. A stopped process is proven by the
    state module's reading (state T for the whole window); a parent waiting for a blocked child is hung without
    proof (the chain through the child proves nothing more), in the child's measured words."""
    from hangwatch.diagnose.process import child_wait_rule, stopped_rule
    from hangwatch.diagnose.scene import Scene

    ev = load(name)
    scene = Scene.of(ev)
    hits = stopped_rule(scene) + child_wait_rule(scene)
    assert hits and all(h.verdict is None and h.finding.proof is None for h in hits), hits
    d = diagnose(ev)
    assert d.verdict.value == verdict, d.root
    fact = d.root.proof.fact if d.root.proof else None
    assert fact is None if proof_says is None else (fact is not None and proof_says in fact), d.root.proof
    if name.startswith("child"):
        assert "which is blocked at 0% CPU for the whole window" in d.root.summary, d.root.summary


@pytest.mark.parametrize("timeout", [False, True])
def test_a_child_asleep_past_the_bounds_proves_its_parents_wait_only_where_that_wait_has_no_timeout(timeout):
    """The child's long timer proves the parent's wait through the chain, which a wait with a timeout
    (``communicate(timeout=...)``) never gets: it ends by itself. The child's own state proves nothing more."""
    ev = load("child_wait_subprocess")
    parent = next(p for p in ev.processes if p.info.role.value == "main")
    kid = next(p for p in ev.processes if p.info.ppid == parent.info.pid)

    def nap(x):
        return replace(
            x, threads=tuple(replace(t, syscall="clock_nanosleep", wakes_in=1e6, state="S") for t in x.threads)
        )

    def waits(x):
        return replace(x, threads=tuple(replace(t, timeout=timeout) for t in x.threads))

    def changed(p):
        return replace(p, samples=tuple((nap if p is kid else waits)(x) for x in p.samples))

    d = diagnose(replace(ev, processes=tuple(changed(p) if p in (kid, parent) else p for p in ev.processes)))
    assert (d.verdict.value, d.root.cause) == ("hung", "child.wait"), d.root
    assert d.root.proves_hang is not timeout, d.root.proof


def test_a_lost_pool_result_is_named_by_its_namer_and_proven_by_the_graphs_edge_to_nobody():
    """[1/5]: child.lost_work sets no verdict and makes no proof; the graph's edge from main's wait for the pool's
    result to nobody (every worker idle, one replaced) proves it, and the namer's words stay. Its twin, the same
    pool whose workers all started together (none replaced: no task was lost), has no such edge, and nothing
    names lost work."""
    from hangwatch.diagnose.lost import lost_work_rule
    from hangwatch.diagnose.scene import Scene

    ev = load("lost_work_inferred")
    assert [h.verdict for h in lost_work_rule(Scene.of(ev))] == [None]
    d = diagnose(ev)
    assert (d.verdict.value, d.root.cause) == ("hung", "child.lost_work"), d.root
    assert d.root.proves_hang and "no living thread will hand it over" in (d.root.proof.fact if d.root.proof else ""), (
        d.root
    )
    assert d.graph is not None and any(e.resource == "pool result" for e in d.graph.edges)
    young = max((p for p in ev.processes if p.info.ppid == ev.processes[0].info.pid), key=lambda p: p.info.create_time)
    first = min(p.info.create_time for p in ev.processes if p.info.ppid == young.info.ppid)
    same_age = replace(young, info=replace(young.info, create_time=first))  # started with its siblings: none replaced
    ev2 = replace(ev, processes=tuple(same_age if p is young else p for p in ev.processes))
    d2 = diagnose(ev2)
    assert all(f.cause != "child.lost_work" for f in d2.findings), d2.findings
    assert d2.graph is None or not any(e.resource == "pool result" for e in d2.graph.edges)


def _caught_on_its_way(ev: Evidence) -> Evidence:
    """The recorded fork_lock capture, with worker 0's first sample taken a moment earlier: on its way to the
    inherited lock (in the scenario's ready() call, running), as a clean-clone CI run once caught it."""
    from hangwatch.records.evidence import Frame

    worker = next(p for p in ev.processes if p.info.role.value == "dataloader_worker")
    first = worker.samples[0]
    main = first.threads[0]
    at = main.frames[0]
    on_its_way = (
        Frame("ready", at.file.replace("fork_lock.py", "_ready.py"), 10, '    with open(path, "a") as f:'),
        replace(at, line=at.line - 1, code="ready()"),
        *main.frames[1:],
    )
    threads = (replace(main, frames=on_its_way, active=True), *first.threads[1:])
    worker = replace(worker, samples=(replace(first, threads=threads), *worker.samples[1:]))
    return replace(ev, processes=tuple(worker if p.info.pid == worker.info.pid else p for p in ev.processes))


def _kernel_read(ev: Evidence) -> Evidence:
    """The recorded fork_lock capture predates the kernel's reading of a blocked call: each DataLoader worker's
    thread, where idle, read as today's capture reads it (a futex private to the process, with no timeout)."""

    def read(x):
        return replace(
            x,
            threads=tuple(
                t if t.active else replace(t, syscall="futex", timeout=False, shared_futex=False) for t in x.threads
            ),
        )

    def worker(p):
        return replace(p, samples=tuple(read(x) for x in p.samples))

    return replace(
        ev, processes=tuple(worker(p) if p.info.role.value == "dataloader_worker" else p for p in ev.processes)
    )


def test_a_worker_left_with_one_thread_in_a_private_futex_is_proven_by_the_graph_and_only_then():
    """[1/5]: fork.inherited_lock only names; the graph proves it. A process with one OS thread in every sample,
    blocked in a futex private to it with no timeout, has no thread that could wake it: an edge to nobody. The
    same capture without the kernel's reading (as recorded) is not proven: the namer's guess that the lock was
    held at fork time is no proof."""
    d = diagnose(_kernel_read(load("fork_inherited_lock")))  # at a Python lock line: a lock nothing can release
    assert (d.verdict.value, d.root.cause) == ("hung", "fork.inherited_lock"), d.root
    assert d.root.proves_hang and "nothing can release it" in (d.root.proof.fact if d.root.proof else "")
    assert d.graph is not None and any(c.ending == "nobody" for c in d.graph.chains)

    def native(p):  # the same wait inside a native call (an OpenMP pool's barrier after fork): no lock line to read
        if p.info.role.value != "dataloader_worker":
            return p
        call = lambda t: replace(t, frames=(replace(t.frames[0], code="    out = torch.mm(a, b)"), *t.frames[1:]))  # noqa: E731
        return replace(p, samples=tuple(replace(x, threads=tuple(call(t) for t in x.threads)) for x in p.samples))

    ev = _kernel_read(load("fork_inherited_lock"))
    d = diagnose(replace(ev, processes=tuple(native(p) for p in ev.processes)))
    assert d.verdict.value == "hung" and d.root.proves_hang, d.root
    assert "one OS thread in every sample" in (d.root.proof.fact if d.root.proof else ""), d.root.proof
    d = diagnose(load("fork_inherited_lock"))  # no kernel reading: no proof
    assert d.verdict.value == "hung" and not d.root.proves_hang, d.root.proof


def test_a_proven_finding_leads_an_unproven_one_at_the_same_place():
    """The each-cause flake of issue [4/5]: worker 0 caught on its way to the inherited lock got no fork evidence
    and was named dataloader.worker_stuck (0.9) above worker 1's proven fork.inherited_lock (0.85) at the very
    same line. The proof leads."""
    ev = _kernel_read(_caught_on_its_way(load("fork_inherited_lock")))
    d = diagnose(ev)
    stuck = next(f for f in d.findings if f.cause == "dataloader.worker_stuck")
    assert stuck.confidence > d.root.confidence, "the replay reproduces the unproven finding's higher confidence"
    assert d.root.cause == "fork.inherited_lock" and d.root.proves_hang, d.root
    _, line = marker("fork_lock.py")
    assert (Path(d.root.where.file or "").name, d.root.where.line) == ("fork_lock.py", line)


def test_ranking_by_confidence_alone_fails_the_replay(monkeypatch):
    """The rule above, inverted (confidence alone decides), fails on the same replay: the test can fail."""
    from hangwatch.diagnose import engine

    monkeypatch.setattr(
        engine, "rank", lambda hits, graph=None, scene=None: sorted(hits, key=lambda h: -h.finding.confidence)
    )
    d = diagnose(_kernel_read(_caught_on_its_way(load("fork_inherited_lock"))))
    assert d.root.cause == "dataloader.worker_stuck"


def _worker_caught_between_batches(ev: Evidence) -> Evidence:
    """The recorded healthy capture of dl_worker_sleepy (a worker sleeping 50 ms in __getitem__ for every item),
    with the worker's last sample taken as it waited for its next index, as a clean-clone CI run once caught it."""
    idle = next(p for p in load("batch_lost").processes if p.info.role.value == "dataloader_worker")
    waiting = idle.samples[-1].threads[0].frames
    worker = next(p for p in ev.processes if p.info.role.value == "dataloader_worker")
    last = worker.samples[-1]
    threads = (replace(last.threads[0], frames=waiting, active=False), *last.threads[1:])
    worker = replace(worker, samples=(*worker.samples[:-1], replace(last, threads=threads)))
    return replace(ev, processes=tuple(worker if p.info.pid == worker.info.pid else p for p in ev.processes))


def test_a_worker_busy_in_its_dataset_is_not_idle_because_the_last_sample_caught_it_between_batches():
    """A worker that sat in __getitem__ in four samples of five and waited for its next index in the last is a
    worker at work, not one of "every worker idle" (dataloader.batch_lost, hung: a false kill in CI). What it did
    in the window decides, never the luck of the last sample."""
    ev = load("worker_sleeping_in_getitem")
    assert diagnose(ev).root.cause == "dataloader.worker_slow"
    d = diagnose(_worker_caught_between_batches(ev))
    assert d.verdict.value == "slow" and d.root.cause == "dataloader.worker_slow", (d.verdict, d.root)
    assert all(f.cause != "dataloader.batch_lost" for f in d.findings), d.findings
    _, line = marker("dl_worker_sleepy.py", "SLEEP-HERE")
    assert (Path(d.root.where.file or "").name, d.root.where.line) == ("dl_worker_sleepy.py", line), d.root.where


def test_a_main_caught_between_two_batches_in_its_last_sample_still_waits_for_its_worker():
    """The same healthy capture, with main's last sample taken as it left the loader's wait (in its own loop, between
    two batches), as a suite run four tests at a time once caught it: main waited for a batch in the other samples,
    so the sleeping worker is still named (slow), not `unknown`."""
    ev = load("worker_sleeping_in_getitem")
    main = next(p for p in ev.processes if p.info.role.value == "main")
    last = main.samples[-1]
    t0 = next(t for t in last.threads if t.tid == main.info.pid)
    own = tuple(f for f in t0.frames if "dataloader" not in f.file and "torch" not in f.file)
    assert own and len(own) < len(t0.frames), t0.frames
    threads = tuple(replace(t, frames=own) if t.tid == t0.tid else t for t in last.threads)
    main = replace(main, samples=(*main.samples[:-1], replace(last, threads=threads)))
    ev = replace(ev, processes=tuple(main if p.info.pid == main.info.pid else p for p in ev.processes))
    d = diagnose(ev)
    assert d.verdict.value == "slow" and d.root.cause == "dataloader.worker_slow", (d.verdict, d.root)


def test_only_a_workers_join_in_torchs_shutdown_is_called_bounded():
    """The pin-memory thread's join in the same shutdown has no timeout: the recorded capture with main in
    threading's join instead of multiprocessing's is no bounded wait (no dataloader.shutdown, no proof of work)."""
    from hangwatch.records.evidence import Frame

    ev = load("dataloader_shutdown")
    assert diagnose(ev).root.cause == "dataloader.shutdown"
    main = next(p for p in ev.processes if p.info.role.value == "main")
    i = next(k for k, f in enumerate(main.samples[0].threads[0].frames) if f.function.endswith("_shutdown_workers"))

    def pin_join(sample):
        t = sample.threads[0]
        frames = (Frame("Thread.join", "/usr/lib/python3.11/threading.py", 1112, "self._wait_for_tstate_lock()"),)
        return replace(sample, threads=(replace(t, frames=frames + t.frames[i:]), *sample.threads[1:]))

    main = replace(main, samples=tuple(pin_join(s) for s in main.samples))
    d = diagnose(replace(ev, processes=tuple(main if p.info.pid == main.info.pid else p for p in ev.processes)))
    assert all(f.cause != "dataloader.shutdown" for f in d.findings), d.root


def test_torchs_bounded_ending_of_its_workers_is_named_by_its_namer_and_proven_working_by_the_state_module():
    """[1/5]: dataloader.shutdown sets no verdict and makes no proof; the state module reads main in torch's ending of
    its workers (a bounded join) as working, with proof, and the verdict stage gives the finding that proof."""
    from hangwatch.diagnose.dataloader import shutdown_rule
    from hangwatch.diagnose.scene import Scene
    from hangwatch.diagnose.state import thread_state

    scene = Scene.of(load("dataloader_shutdown"))
    hits = shutdown_rule(scene)
    assert hits and all(h.verdict is None and h.finding.proof is None for h in hits), hits
    main = next(v for v in scene.views if v.role.value == "main")
    m = thread_state(main, main.main_thread)
    assert (m.state, m.proves_work) == ("working", True) and "joined for up to 5 s" in m.fact, m
    d = diagnose(scene.evidence)
    assert d.root.proof is not None and d.root.proof.fact == m.fact, d.root


def test_a_counting_spin_is_named_by_its_namer_and_proven_by_its_threads_measured_state():
    """[1/5]: code.busy_loop sets no verdict and makes no proof; the verdict stage proves the spin from the thread's
    state (its locals: a counter that counts nothing). Its twin, the same capture with no locals read: the same
    line in every sample, whether it gets anywhere not read, judged by the history (slow, no proof)."""
    from hangwatch.diagnose.code import busy_loop_rule
    from hangwatch.diagnose.scene import Scene

    ev = load("busy_loop")
    hits = busy_loop_rule(Scene.of(ev))
    assert hits and all(h.verdict is None and h.finding.proof is None for h in hits), hits
    d = diagnose(ev)
    assert (d.verdict.value, d.root.cause) == ("hung", "code.busy_loop"), d.root
    assert d.root.proof is not None and d.root.proof.fact.startswith("a counting spin"), d.root.proof
    unread = diagnose(replace(ev, processes=tuple(replace(p, locals=()) for p in ev.processes)))
    assert (unread.verdict.value, unread.root.cause, unread.root.proof) == ("slow", "code.busy_loop", None)


def test_an_exit_that_joins_a_thread_polling_for_a_stop_nobody_can_set_is_proven_and_a_shared_stop_is_not():
    """[1/5]: the exit's join of a monitor in `while not stop.wait(1.0): pass` (bench/zoo/nondaemon_thread_at_exit.py,
    recorded): the loop's only way out is its event, the kernel reads a futex private to the process, and no other
    thread runs Python: proven by the monitor's state (it was hung for the clock). The same capture with the futex
    shared (a multiprocessing event) beside a child that lives (it may set it) is not proven: hung without proof, for
    the clock, as it is where the monitor waits on it with no timeout (its wake-ups are only its wait's timeouts,
    retried: ``state.retries``; they had made it alive, slow); nor with no other process captured; nor where only the last read, caught as the wait restarted, had no address;
    nor beside a thread in wait4 that may set the stop when its child exits, or in pause() when a signal comes. The
    namer sets neither."""
    from hangwatch.diagnose.code import exit_wait_rule
    from hangwatch.diagnose.scene import Scene

    ev = load("exit_joins_a_thread_polling_for_a_stop_nobody_sets")
    assert all(h.verdict is None and h.finding.proof is None for h in exit_wait_rule(Scene.of(ev)))
    d = diagnose(ev)
    assert (d.verdict.value, d.root.cause) == ("hung", "code.deadlock"), d.root
    assert d.root.proof is not None and "ends only when `stop` is set" in d.root.proof.fact, d.root.proof
    assert "daemon=True" in d.root.fix[0] and "timer.cancel()" not in d.root.fix[0], d.root.fix

    def shared(p):  # the monitor's event only: main's join waits on a thread lock of its own
        return replace(
            p,
            samples=tuple(
                replace(
                    x,
                    threads=tuple(
                        replace(t, shared_futex=t.syscall == "futex" and t.tid != p.info.pid) for t in x.threads
                    ),
                )
                for x in p.samples
            ),
        )

    from hangwatch.records.evidence import Role

    main = ev.processes[0]

    def child(wakes_in):  # the child that holds the event too (it would set it), alive and asleep
        return replace(
            main,
            info=replace(main.info, pid=main.info.pid + 7, ppid=main.info.pid, role=Role.CHILD),
            samples=tuple(
                replace(
                    x,
                    threads=(
                        replace(
                            x.threads[0],
                            tid=main.info.pid + 7,
                            syscall="clock_nanosleep",
                            timeout=wakes_in is not None,
                            wakes_in=wakes_in,
                        ),
                    ),
                )
                for x in main.samples
            ),
        )

    kid = child(5.0)
    for asleep in (kid, child(None)):  # (on a timer the look read, or not)
        d = diagnose(replace(ev, processes=(*tuple(shared(p) for p in ev.processes), asleep)))
        assert (d.verdict.value, d.root.cause, d.root.proof) == ("hung", "code.deadlock", None), d.root
        assert "retries `stop.wait(1.0)`, its loop's only way out" in d.root.summary, d.root.summary
    d = diagnose(replace(ev, processes=tuple(shared(p) for p in ev.processes)))
    assert d.root.proof is None, "shared, with no other process captured: one outside the capture may still set it"

    def restarted_last(p):  # shared, but the last read caught the wait restarting (no address, so not shared)
        p = shared(p)
        last = p.samples[-1]
        threads = tuple(replace(t, futex=None, shared_futex=False) if t.syscall == "futex" else t for t in last.threads)
        return replace(p, samples=(*p.samples[:-1], replace(last, threads=threads)))

    d = diagnose(replace(ev, processes=(*tuple(restarted_last(p) for p in ev.processes), kid)))
    assert d.root.proof is None, d.root

    from hangwatch.records.evidence import Frame

    def with_thread(p, name, syscall, frame):  # one more thread, parked in ``syscall`` with no timeout, at ``frame``
        def add(x):
            t = next(t for t in x.threads if t.syscall == "futex" and t.tid != p.info.pid)
            more = replace(t, tid=t.tid + 1000, name=name, syscall=syscall, futex=None, timeout=False, frames=(frame,))
            return replace(x, threads=(*x.threads, more))

        return replace(p, samples=tuple(add(x) for x in p.samples))

    # a thread in wait4 for a child (`p.join(); stop.set()`) runs again when the child exits; one in signal.pause()
    # when a signal comes: either may set the stop
    for name, syscall, frame in (
        ("reaper", "wait4", Frame("reap", "/job/train.py", 12, "p.join()")),
        ("keepalive", "pause", Frame("keepalive", "/job/train.py", 20, "signal.pause()")),
    ):
        d = diagnose(replace(ev, processes=tuple(with_thread(p, name, syscall, frame) for p in ev.processes)))
        assert d.root.proof is None, (name, d.root)


@pytest.mark.parametrize(
    ("name", "verdict", "line"),
    [
        ("exit_joins_a_thread_polling_for_a_stop_nobody_sets", "hung", 18),
        ("exit_joins_a_heartbeat_sleeping_between_reads_of_a_stop_nobody_sets", "hung", 20),
        # the twins: a thread asleep on a timer within the bounds, a Timer due soon, a stop a living child may set
        ("exit_joins_a_thread_asleep_on_a_bounded_timer", "slow", None),
        ("exit_joins_a_timer_due_within_the_bounds", "slow", None),
        ("exit_joins_a_heartbeat_whose_multiprocessing_stop_a_living_child_sets", "slow", None),
    ],
)
def test_the_exits_join_of_a_thread_in_a_loop_with_no_way_out_is_decided_by_the_graph_alone(name, verdict, line):
    """The interpreter's exit joins a non-daemon thread whose loop its state proves has no way out: the graph draws
    the join to that thread (its one releaser) and its chain proves the hang with no namer at all (``rules=()``, was
    `slow` `unknown`: only the exit's namer decided it), at the loop's line, with the exit's fix. A thread asleep on a
    timer within the bounds, or one whose stop a living child may set, is not hung by the graph either."""
    d = diagnose(load(name), rules=())
    assert d.verdict.value == verdict, d.root
    if verdict == "hung":
        assert d.root.proof is not None and "a loop with no way out" in d.root.proof.fact, d.root.proof
        assert d.root.where is not None and d.root.where.line == line, d.root.where
        assert "threading._shutdown" in d.root.summary and "daemon=True" in d.root.fix[0], d.root
    else:
        assert d.root.proof is None or d.root.proof.kind.value != "hang", d.root


@pytest.mark.parametrize(
    ("name", "verdict", "cause"),
    [
        ("busy_loop", "hung", "code.busy_loop"),
        # its stack moves within a loop its state proves cannot end: no compute (was `progressing` with no namer)
        ("a_sampler_spinning_in_a_loop_whose_condition_cannot_change", "hung", "code.busy_loop"),
        ("stopped_process_is_reported_and_left_stopped", "stopped", "process.stopped"),
        # the twins: a loop whose one line is in every sample, a long call once per turn (their work not disproved)
        ("toplevel_loop_one_line_in_every_sample", "slow", None),
        ("a_long_call_once_per_turn_of_a_loop_whose_locals_stay", "slow", None),
        ("a_main_looping_for_ever_while_its_child_streams", "slow", None),  # its loop proven, its child works
        ("a_main_looping_for_ever_while_a_thread_awaits_a_peer", "slow", None),  # a thread of it may act
    ],
)
def test_a_process_that_waits_on_nothing_is_judged_by_its_own_state_with_no_namer(name, verdict, cause):
    """The job's main process waits on nothing (no chain), and its own measured state proves a hang (a spin that
    gets nowhere, stopped): with no namer at all (``rules=()``), that state names it and the verdict stage judges it
    as it judges a namer's (was `hung` `unknown` with no proof, or `slow`: only the busy-loop and stopped namers
    decided). A loop whose state proves no hang is not declared by it, nor one in a job whose output grows or whose
    other processes move (a main that sleeps in `while True` while the helper it started works)."""
    d = diagnose(load(name), rules=())
    assert d.verdict.value == verdict, d.root
    if cause is not None:
        assert d.root.cause == cause and d.root.proof is not None and d.root.proof.kind.value == "hang", d.root
    else:
        assert d.root.proof is None or d.root.proof.kind.value != "hang", d.root
    grown = diagnose(_grow_stdout(load(name)), rules=())  # its output grows: the job progresses, whatever it loops on
    assert grown.verdict.value in ("progressing", "stopped"), grown.root


def test_a_main_that_only_sleeps_in_a_loop_with_no_way_out_is_told_to_give_it_one_not_to_log_its_inputs():
    """The main process of the recorded keep-alive (`while True: time.sleep(0.5)`), its streaming child left out: its
    own state proves the hang, and the fix is a loop's with no way out. It was the spin's ("its exit condition is never
    met for this input", "log the loop's inputs"): a sleep-only loop has no exit condition and reads no input."""
    ev = load("a_main_looping_for_ever_while_its_child_streams")
    alone = replace(ev, processes=ev.processes[:1])
    for d in (diagnose(alone), diagnose(alone, rules=())):
        assert d.verdict.value == "hung" and d.root.cause == "code.busy_loop", d.root
        assert "no way out" in d.root.summary and "a way out" in d.root.fix[0], d.root
        assert "input" not in " ".join(d.root.fix), d.root.fix


def test_a_workers_pool_thread_read_in_the_last_samples_only_is_still_followed_to_its_timer():
    """A DataLoader worker's __getitem__ waits on a future its own pool thread completes after a slow read. Caught as
    the worker began, the pool thread is read in the last samples only, asleep on its timer but not blocked for the
    whole window: it was not followed, the worker's wait was "blocked" with nothing followed, and the healthy job was
    killed by the clock at --min-stall (CI, twice in four suite runs). It is followed to its timer: alive."""
    ev = load("a_workers_future_its_pool_thread_completes_after_a_nap")
    worker = next(p for p in ev.processes if p.info.role.value == "dataloader_worker")
    pool = next(t.tid for t in worker.samples[0].threads if t.name.startswith("chunk-io"))
    n = len(worker.samples)
    late = replace(
        worker,
        samples=tuple(
            replace(x, threads=tuple(t for t in x.threads if t.tid != pool or i >= n - 2))
            for i, x in enumerate(worker.samples)
        ),
    )
    ev = replace(ev, processes=tuple(late if p is worker else p for p in ev.processes))
    d = diagnose(ev)
    assert d.verdict.value == "slow" and d.root.cause == "dataloader.worker_stuck", d.root


def test_a_heartbeat_at_exit_that_sleeps_between_reads_of_a_threading_event_is_proven_and_only_that():
    """Recorded from the zoo pair: `while not stop.is_set(): time.sleep(1.0)` at exit sleeps between reads of its
    flag, so the kernel never sees whose it is. Its file does: where it binds ``stop`` only to ``threading.Event()``,
    no other process nor a file can set it, and with no other thread that could, nor a handler of a signal but
    SIGINT's, the loop has no way out: proven. Not proven: the twin, whose flag is a multiprocessing event a living
    child sets (its file binds it as a parameter); the same recording where the flag's kind was not read, where a
    SIGTERM handler is installed (it runs on the main thread and may set the flag), where the handlers were not
    read, or where another thread waits on a timer (it may set the flag when it wakes). (A reading that the process
    was alone proved the first; its review found flags an outside process or a file sets, and it was taken out.)"""
    from hangwatch.records.evidence import Frame

    ev = load("exit_joins_a_heartbeat_sleeping_between_reads_of_a_stop_nobody_sets")
    d = diagnose(ev)
    assert (d.verdict.value, d.root.cause) == ("hung", "code.deadlock"), d.root
    assert d.root.proof is not None and "`stop` is set" in d.root.proof.fact, d.root.proof
    twin = diagnose(load("exit_joins_a_heartbeat_whose_multiprocessing_stop_a_living_child_sets"))
    assert (twin.verdict.value, twin.root.cause, twin.root.proof) == ("slow", "code.deadlock", None), twin.root

    def changed(info=None, read=None, thread=None):
        def one(p):
            if info:
                p = replace(p, info=replace(p.info, **info))
            if read:
                p = replace(p, locals=tuple(replace(r, **read) for r in p.locals))
            if thread:
                p = replace(p, samples=tuple(replace(x, threads=(*x.threads, thread(x))) for x in p.samples))
            return p

        return diagnose(replace(ev, processes=tuple(one(p) for p in ev.processes)))

    sigterm = ev.processes[0].info.caught_signals | (1 << 14)

    def timer(x):  # a thread asleep on a timer of its own: `threading.Timer(30, stop.set)`
        t = x.threads[0]
        frame = Frame("run", "/usr/lib/python3.11/threading.py", 1429)
        return replace(t, tid=t.tid + 1000, name="Timer", syscall="futex", futex=None, timeout=True, frames=(frame,))

    def one_sleep(p):  # the heartbeat never woke in the window: one long sleep, not a loop seen looping
        heartbeat = next(r.tid for r in p.locals)
        samples = tuple(
            replace(x, threads=tuple(replace(t, ctx_switches=0) if t.tid == heartbeat else t for t in x.threads))
            for x in p.samples
        )
        return replace(p, samples=samples)

    # handlers that cannot set the flag: SIGINT's (a person's Ctrl-C, in the foreground), glibc's 32 and 33,
    # faulthandler's (the process's own faults), torch's SIGCHLD where no child lives
    for caught in (0x100000002, 0x1000104EA | (1 << 16)):
        d = changed(info={"caught_signals": caught})
        assert (d.verdict.value, d.root.proof is not None) == ("hung", True), (hex(caught), d.root)
    rt_handler = ev.processes[0].info.caught_signals | (1 << 35)  # SIGRTMIN+2 (signal 36)
    for name, d in (
        ("the flag's kind not read", changed(read={"flag": None})),
        ("a SIGTERM handler", changed(info={"caught_signals": sigterm})),
        ("a real-time signal's handler", changed(info={"caught_signals": rt_handler})),
        ("handlers not read", changed(info={"caught_signals": None})),
        ("a thread on a timer", changed(thread=timer)),
        ("one sleep", diagnose(replace(ev, processes=tuple(one_sleep(p) for p in ev.processes)))),
    ):
        assert (d.verdict.value, d.root.proof) == ("slow", None), (name, d.root)


def test_the_torch_2_11_shape_of_the_shutdown_measured_on_an_h100_is_bounded_too():
    """On an H100 (torch 2.11) a healthy job with two persistent pinned-memory workers sat 10 s at exit in
    `_clean_up_worker` (its workers never got the end message: each joined 5 s, then terminated) and was reported
    `hung unknown` at --min-stall 3. Its main thread's recorded stack, put in the CPU capture: dataloader.shutdown."""
    from hangwatch.records.evidence import Frame

    gpu = FIXTURES.parent / "gpu" / "h100" / "pinned-persistent-workers-exit-incident.json"
    recorded = json.loads(gpu.read_text())
    main_rec = next(p for p in recorded["processes"] if p["role"] == "main")
    frames = tuple(
        Frame(f["function"], f["file"], f["line"])
        for t in main_rec["threads"]
        if t["tid"] == main_rec["pid"]
        for f in t["frames"]
    )
    assert recorded["findings"][0]["cause"] == "unknown" and frames[4].function.endswith("_clean_up_worker")
    ev = load("dataloader_shutdown")
    main = next(p for p in ev.processes if p.info.role.value == "main")

    def h100(sample):
        t = sample.threads[0]
        return replace(sample, threads=(replace(t, frames=frames), *sample.threads[1:]))

    main = replace(main, samples=tuple(h100(s) for s in main.samples))
    d = diagnose(replace(ev, processes=tuple(main if p.info.pid == main.info.pid else p for p in ev.processes)))
    assert (d.verdict.value, d.root.cause) == ("slow", "dataloader.shutdown"), d.root


def test_a_loop_at_a_modules_top_level_seen_on_one_line_in_every_sample_is_told_apart_by_its_line_reads():
    """A loop at a module's top level has no locals to read, so its stack moving is the only sign it works. In suite
    run 27 all five samples of the healthy one (tests/scenarios/toplevel_loop.py walk) landed on `hits += hit`, and
    the job's history killed it. Replayed: a real capture of it with every sample forced onto that line. The burst of
    line reads the capture now takes for such a thread sees the other lines of the loop: it works (proof of work,
    slow); without them (what the capture had before) it is the same line, and the history decides."""
    ev = load("toplevel_loop_one_line_in_every_sample")
    assert {f.line for p in ev.processes for s in p.samples for t in s.threads for f in t.frames[:1]} == {25}
    assert len({r.line for p in ev.processes for r in p.locals}) > 1
    d = diagnose(ev)
    assert (d.verdict.value, d.root.cause.value) == ("slow", "code.busy_loop")
    assert d.root.proof is not None and d.root.proof.kind.value == "work", d.root
    before = replace(ev, processes=tuple(replace(p, locals=()) for p in ev.processes))
    d = diagnose(before)
    assert d.root.cause.value == "code.busy_loop" and d.root.proof is None and "runs the same code" in d.root.summary


# --- ranks as nodes of the graph: the calls they are blocked in, read from their arguments ------------------
def _with_calls(ev: Evidence, calls: dict[int, C10dWait | None]) -> Evidence:
    """The recorded evidence with each rank's c10d call replaced (rank -> call)."""
    return replace(
        ev,
        processes=tuple(replace(p, c10d=calls[p.info.rank]) if p.info.rank in calls else p for p in ev.processes),
    )


def _proven_cycle(ev: Evidence) -> bool:
    d = diagnose(ev)
    return d.graph is not None and any(c.ending == "cycle" and c.proof is not None for c in d.graph.chains)


def test_two_ranks_that_send_to_each_other_are_a_proven_cycle_and_a_matching_pair_is_not():
    """Recorded: two gloo ranks each blocked in dist.send to the other. The same stacks with rank 1 in the
    matching receive are a pair the transport completes (no edge, no cycle); with the peer unread, no edge."""
    ev = load("distributed_p2p_send_cycle")
    assert _proven_cycle(ev)
    root = diagnose(ev).root
    assert root.proof is not None and "each waits for the other to post the matching call" in root.summary
    assert not _proven_cycle(_with_calls(ev, {1: C10dWait("recv", 0, True)}))
    assert not _proven_cycle(_with_calls(ev, {0: C10dWait("send", None, True)}))


def test_a_collective_of_a_group_of_the_users_draws_no_edge_but_one_of_the_default_group_does():
    """Rank 0 in all_reduce while rank 1 sends to it: on the default group rank 0 waits for rank 1, which waits
    for rank 0 to receive: a cycle. On a group of the user's (3-D parallelism: a data-parallel group while a
    pipeline stage sends), rank 0 waits for that group's members, which its arguments do not name: no edge, so
    no proof (a false kill of a healthy pipeline otherwise); unread arguments the same."""
    ev = load("distributed_p2p_send_cycle")
    send = C10dWait("send", 0, True)
    assert _proven_cycle(_with_calls(ev, {0: C10dWait("all_reduce", None, True), 1: send}))
    assert not _proven_cycle(_with_calls(ev, {0: C10dWait("all_reduce", None, False), 1: send}))
    assert not _proven_cycle(_with_calls(ev, {0: C10dWait("all_reduce", None, None), 1: send}))


@pytest.mark.parametrize(
    ("op", "args", "kwargs", "world"),
    [
        ("all_reduce", "(<Tensor at 0x7f1>)", "{}", True),
        ("all_reduce", "(<Tensor at 0x7f1>)", '{"group": <torch._C._distributed_c10d.ProcessGroup at 0x7f2>}', False),
        ("all_reduce", "(<Tensor at 0x7f1>)", '{"group": None}', True),
        ("all_reduce", "(<Tensor at 0x7f1>, <RedOpType.SUM: 0>, <ProcessGroup at 0x7f2>)", "{}", False),
        ("barrier", "()", "{}", True),
        ("barrier", "(<ProcessGroup at 0x7f2>)", "{}", False),
        ("send", "(<Tensor at 0x7f1>)", '{"dst": 1}', True),
        ("all_reduce", "(<Tensor at 0x7f1>, <RedOpType.SUM: 0>, <torch._C._distributed_c10d.Proc...", "{}", None),
        ("all_reduce", "None", "None", None),
        ("new_op", "()", "{}", None),
    ],
)
def test_whether_a_call_runs_on_the_default_group_is_read_from_its_arguments(op, args, kwargs, world):
    from hangwatch.capture.c10d import on_world

    assert on_world(op, args, kwargs) is world


def _ended(p: ProcessEvidence, how: str) -> ProcessEvidence:
    """A process of a recorded capture, made to end during the look: gone by its end, or a zombie at its last
    sample (exited, not reaped yet: the zoo's own parent reaps its case only at the end)."""
    if how == "exited":
        return replace(p, exited=True)
    return replace(p, samples=(*p.samples[:-1], replace(p.samples[-1], state="Z")))


@pytest.mark.parametrize("how", ["exited", "zombie"])
@pytest.mark.parametrize(
    "name", ["deadlock", "child_wait_subprocess", "network_wait", "unknown_still_points_at_the_line"]
)
def test_a_process_that_exits_during_the_look_is_not_hung_and_its_twin_that_stays_is(name, how):
    """The look saw the process named hung end (an upload thread joined at interpreter exit finished while it
    looked: bench/zoo/like_executor_upload_at_exit.py was `hung code.deadlock` under inspect, its main a zombie at
    the look's end): what it waited for came, so the look says slow, with the fact; the same capture with the
    process still there stays hung."""
    ev = load(name)
    d = diagnose(ev)
    assert d.verdict.value == "hung"
    pid = d.findings[0].where.pid if d.findings[0].where and d.findings[0].where.pid else ev.processes[0].info.pid
    ended = replace(ev, processes=tuple(_ended(p, how) if p.info.pid == pid else p for p in ev.processes))
    d2 = diagnose(ended)
    assert d2.verdict.value == "slow", d2.findings[0]
    said = [d2.findings[0].summary, *(e for f in d2.findings for e in f.evidence)]
    assert any("exited during the look" in x for x in said), d2.findings[0]


ZOO = Path(__file__).resolve().parents[2] / "bench" / "zoo"


def test_a_wait_at_a_process_running_no_file_of_the_users_points_at_the_first_one_on_its_chain_that_does():
    """The flock's waiter runs `python -c`: the place is its parent's line, where it waits for that child while it
    holds the lock (the chain's next hop), with the hop said in the evidence."""
    ev = load("flock_cycle_parent_waits_its_python_c_child")
    d = diagnose(ev)
    w = d.findings[0].where
    _, line = marker(ZOO / "parent_holds_flock_waits_child.py")  # the recording's path is its machine's
    assert w is not None and (Path(w.file or "").name, w.line) == ("parent_holds_flock_waits_child.py", line)
    parent = next(p.info.pid for p in ev.processes if p.info.role.value == "main")
    assert w.pid != parent and "child (pid" in d.findings[0].summary  # still the waiter's finding: the place moved
    assert any(e.startswith("the place is main") for e in d.findings[0].evidence)


def test_a_loop_of_waits_the_graph_cannot_prove_is_named_by_its_hops_never_more_hung_than_without_a_name():
    """The loop: main's watcher thread waits for the child, the child writes to a full pipe main could read, and
    main's event loop polls only its own wake-up socket, which that thread alone writes to: proven (own.py
    ``sole_releaser``). With a second thread that may wake the loop, nothing is named and nothing moves: the loop
    is the finding, unproven (the clock decides, as for `unknown`); the same capture with the child measured working
    is not hung at all."""
    ev = load("asyncio_wait_on_a_child_filling_its_pipe")
    d = diagnose(ev)
    assert d.findings[0].proof is not None and d.findings[0].proof.kind.value == "hang", d.findings[0]
    main = next(p for p in ev.processes if p.info.role.value == "main")
    watcher = next(t for t in main.samples[-1].threads if t.tid != main.info.pid and t.frames)

    def two_watchers(s):
        twin = next(t for t in s.threads if t.tid == watcher.tid)
        return replace(s, threads=(*s.threads, replace(twin, tid=watcher.tid + 1000, name="another")))

    twice = replace(main, samples=tuple(two_watchers(s) for s in main.samples))
    d1 = diagnose(replace(ev, processes=tuple(twice if p is main else p for p in ev.processes)))
    assert d1.findings[0].proof is None and "a loop of waits, not proven" in d1.findings[0].summary, d1.findings[0]
    child = next(p for p in ev.processes if p.info.role.value == "child")
    busy = replace(child, samples=tuple(replace(s, cpu_seconds=s.cpu_seconds + i) for i, s in enumerate(child.samples)))
    d2 = diagnose(replace(ev, processes=tuple(busy if p is child else p for p in ev.processes)))
    assert d2.verdict.value != "hung", d2.findings[0]


@pytest.mark.parametrize(
    ("name", "case"),
    [
        ("a_task_blocked_on_a_leaked_semaphore_behind_a_future", "semaphore_leaked_by_raising_call.py"),
        ("asyncio_run_exit_joins_an_executor_thread_blocked_in_get", "asyncio_run_exit_joins_blocked_executor.py"),
    ],
)
def test_a_wait_for_another_threads_end_points_at_the_thread_whose_own_wait_ends_the_others(name, case):
    """Main waits for a task's future (a task blocked on a semaphore whose slots leaked), or asyncio.run's loop waits
    for its executor's shutdown (which joins a thread blocked in Queue.get()): every thread is parked, and the place
    is the blocked task's line, said in the words; the finding stays main's (pid, tid) and keeps its proof."""
    ev = load(name)
    d = diagnose(ev)
    f = d.findings[0]
    _, line = marker(ZOO / case)
    assert d.verdict.value == "hung" and f.proof is not None and f.proof.kind.value == "hang"
    assert f.where is not None and (Path(f.where.file or "").name, f.where.line) == (case, line)
    main = next(p.info.pid for p in ev.processes if p.info.role.value == "main")
    assert f.where.pid == main and f.where.tid == main  # the waiter's finding: only its place moved
    assert "blocked in the user's own wait is" in f.summary, f.summary


def test_a_hang_named_without_proof_while_another_process_works_is_slow_and_its_twin_whose_child_crashed_is_not():
    """A parent in accept() for the child that will connect: the child computes (a proof of work), so the parent's
    unproven network wait is slow, bounded by --max-slow, not by the clock; the same wait for a child that crashed
    (a zombie) stays hung, unproven, for --min-stall to confirm."""
    d = diagnose(load("accept_while_the_child_that_connects_computes"))
    f = d.findings[0]
    assert d.verdict.value == "slow" and f.proof is not None and f.proof.kind.value == "work", f
    assert "; child (pid" in f.summary and "the wait may end with that work" in f.summary, f.summary
    assert f.confidence <= 0.4, f  # a wait the chain does not bear out ranks below a proven hang elsewhere
    d2 = diagnose(load("accept_for_a_child_that_crashed"))
    assert d2.verdict.value == "hung" and d2.findings[0].proof is None, d2.findings[0]
    # a server's accept() waits for a client, not a reply: said so, with a fix that is not a download's
    for each in (f, d2.findings[0]):
        assert "waits for a client to connect to 127.0.0.1:" in each.summary and "client" in each.fix[0], each
        assert "requests.get" not in " ".join(each.fix), each.fix


@pytest.mark.parametrize(
    ("healthy", "hung", "said"),
    [
        (
            "exit_joins_a_listener_whose_stop_a_working_thread_sets",
            "exit_joins_a_listener_whose_stop_only_atexit_sets",
            "100% CPU with its stack moving in flush",
        ),
        (
            "a_future_of_a_loop_thread_asleep_on_its_timer",
            "a_future_of_a_loop_thread_that_stopped",
            "thread 'radio' waits in epoll_wait()",
        ),
    ],
)
def test_a_wait_another_thread_of_the_process_may_end_is_not_hung_and_its_twin_with_none_left_is(healthy, hung, said):
    """The exit's join of a listener whose stop event a thread at full CPU will set (its GIL hand-offs are not a
    poll's wake-ups), and main awaiting a coroutine's future while the loop's own thread sleeps on the coroutine's
    timer: not hung, the fact said; the same shapes with only an atexit handler (run after the join) or a stopped loop
    left to end the wait are hung."""
    d = diagnose(load(healthy))
    said_all = [d.findings[0].summary, *(e for f in d.findings for e in f.evidence)]
    assert d.verdict.value == "slow", d.findings[0]
    assert any(said in x for x in said_all), said_all
    d2 = diagnose(load(hung))
    assert d2.verdict.value == "hung", d2.findings[0]


def test_a_loop_thread_caught_awake_in_the_last_sample_is_read_by_its_poll_before():
    """Under load the loop's thread, woken from its poll, waits for a CPU and a sample catches it running between two
    polls (state R, no syscall, its stack in ``_run_once``): that sample says nothing against its poll, and the newest
    sample asleep in it decides. Read from the last sample only, the healthy job was "hung unknown", for the clock to
    kill (a look-alike of the zoo was ended once so, with no proof)."""
    ev = load("a_future_of_a_loop_thread_asleep_on_its_timer")
    p = ev.processes[0]
    last = p.samples[-1]
    awake = tuple(
        replace(
            t, state="R", syscall=None, wait_max=None, wakes_in=None, timeout=None, active=True, frames=t.frames[1:]
        )
        if t.name == "radio"
        else t
        for t in last.threads
    )
    caught = replace(p, samples=(*p.samples[:-1], replace(last, threads=awake)))
    d = diagnose(replace(ev, processes=(caught,)))
    assert d.verdict.value == "slow", d.findings[0]
    assert any("thread 'radio' waits in epoll_wait()" in e for f in d.findings for e in f.evidence), d.findings[0]


@pytest.mark.parametrize(
    ("name", "verdict", "said"),
    [
        ("a_slow_download_with_its_stdout_in_a_file", "slow", ", alive (working: main (pid"),
        ("network_wait", "hung", "is blocked waiting for the network at"),
    ],
)
def test_a_namer_names_and_the_state_of_its_thread_judges(name, verdict, said):
    """[1/5]: io.network_wait names the wait and sets no verdict (``named``); the verdict stage gives it the one the
    state module measures for its thread: the download moving bytes is slow, with the state's fact in the words and
    its proof of work (it
    said "sending to the network slowly": the bytes written were the file's); the socket that never answers is
    hung, unproven (--min-stall decides)."""
    from hangwatch.diagnose.io import network_wait_rule
    from hangwatch.diagnose.scene import Scene

    ev = load(name)
    assert [h.verdict for h in network_wait_rule(Scene.of(ev))] == [None]
    d = diagnose(ev)
    f = d.findings[0]
    assert (f.cause, d.verdict.value) == ("io.network_wait", verdict), f
    # the bytes that move are the state's proof of work; the socket that never answers has no proof
    assert (f.proof.kind.value if f.proof else None) == ("work" if verdict == "slow" else None), f
    assert said in f.summary, f.summary
    if verdict == "slow":  # a healthy case has no marker: the line that copies the response
        text = (ZOO / "like_slow_download.py").read_text().splitlines()
        line = next(n for n, x in enumerate(text, 1) if "shutil.copyfileobj" in x)
    else:
        _, line = marker("network_wait.py", "HANG-HERE")
    assert f.where is not None and f.where.line == line


def _moving_thread(ev: Evidence, main_wakes: int) -> Evidence:
    """The prefetch capture with bytes moving in the process (256 KiB and 20 read/write calls a sample), its
    prefetch thread woken twice, and its main thread woken ``main_wakes`` times over the look."""
    p = ev.processes[0]
    samples = []
    for i, s in enumerate(p.samples):
        threads = tuple(
            replace(x, ctx_switches=(i * main_wakes // (len(p.samples) - 1)) if x.tid == p.info.pid else min(i, 2))
            for x in s.threads
        )
        samples.append(replace(s, rchar=(s.rchar or 0) + i * (256 << 10), syscalls=100 + 20 * i, threads=threads))
    return replace(ev, processes=(replace(p, samples=tuple(samples)),))


def test_the_process_bytes_are_the_one_thread_that_could_move_them_and_no_other():
    """A download thread whose process moves bytes while every other thread sat still (main never woken, in its
    queue's get) works, by those bytes: the network wait is alive, said with the state's fact. The same capture with
    main woken too: the bytes could be main's, so the download thread is judged by its own facts (blocked)."""
    from hangwatch.diagnose.scene import Scene
    from hangwatch.diagnose.state import moves_for_its_process, thread_state

    ev = load("network_wait_in_a_prefetch_thread")
    for main_wakes, state in ((0, "working"), (40, "blocked")):
        moved = _moving_thread(ev, main_wakes)
        v = Scene.of(moved).views[0]
        t = next(x for x in v.threads if x.name == "prefetcher")
        assert moves_for_its_process(v, t) == (main_wakes == 0)
        assert thread_state(v, t).state == state, thread_state(v, t)
    d = diagnose(_moving_thread(ev, 0))
    assert (d.verdict.value, d.findings[0].cause) == ("slow", "io.network_wait"), d.findings[0]
    assert "alive (working: main (pid" in d.findings[0].summary, d.findings[0].summary


def test_a_wait_on_storage_is_judged_by_the_bytes_the_storage_moves():
    """io.storage_wait names a process in D for the whole look and sets no verdict: the state judges it. The vfork
    capture (nothing moves; the line shared with the child says sleep(600), but a thread in D waits on no timer) is
    hung, unproven; the same with 2 MiB read from storage in the look (a mapped file's page faults over NFS: no read
    call, no rchar) is slow, with the state's fact."""
    from hangwatch.diagnose.io import storage_wait_rule
    from hangwatch.diagnose.scene import Scene

    ev = load("d_state_process_is_captured_without_hanging")
    assert [h.verdict for h in storage_wait_rule(Scene.of(ev))] == [None]
    d = diagnose(ev)
    assert (d.findings[0].cause, d.verdict.value, d.findings[0].proof) == ("io.storage_wait", "hung", None)
    p = ev.processes[0]
    n = len(p.samples) - 1
    reads = tuple(replace(s, read_bytes=(s.read_bytes or 0) + i * (2 << 20) // n) for i, s in enumerate(p.samples))
    moving = replace(ev, processes=(replace(p, samples=reads), *ev.processes[1:]))
    d2 = diagnose(moving)
    f = d2.findings[0]
    assert (f.cause, d2.verdict.value) == ("io.storage_wait", "slow"), f
    assert any("moved 2.0 MiB to or from storage" in e for x in d2.findings for e in (x.summary, *x.evidence)), f


@pytest.mark.parametrize("code", ["time.sleep(pause)", ""])
def test_a_short_timer_the_kernel_shows_is_something_that_moves_whatever_its_line_says(code):
    """A reader child started as ``python -c`` sleeps between its reads: its line cannot be read, but the kernel's
    timer (0.5 s) says it wakes by itself. With one sample of it (no counter moves on a loaded machine) that timer
    is all that says the job moves; it came out hung without it (the zoo's like_pipe_write_reader_slow, inspected
    under CI's load). The same timer past the bounds moves nothing."""
    from hangwatch.diagnose.scene import Scene
    from hangwatch.diagnose.state import moving

    ev = load("child_wait_subprocess")
    kid = next(p for p in ev.processes if p.info.ppid == ev.processes[0].info.pid)

    def nap(x, left):
        frames = lambda t: tuple(replace(f, code=code) for f in t.frames)  # noqa: E731
        return replace(
            x,
            threads=tuple(
                replace(t, syscall="clock_nanosleep", wakes_in=left, state="S", frames=frames(t)) for t in x.threads
            ),
        )

    def with_timer(left):
        sleeper = replace(kid, samples=(nap(kid.samples[-1], left),))
        return replace(ev, processes=tuple(sleeper if p is kid else p for p in ev.processes))

    assert moving(Scene.of(ev)) is None
    said = moving(Scene.of(with_timer(0.5)))
    assert said is not None and "timer" in said, said
    assert moving(Scene.of(with_timer(1e6))) is None


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


@pytest.mark.parametrize("busy", [False, True])
def test_a_lost_batch_is_proven_only_where_nothing_of_main_or_its_workers_runs(busy):
    """[1/5]: the graph's edge from main's wait for a batch to nobody needs main and every worker still, on every
    thread: a worker's feeder thread at CPU (copying a batch into shared memory) may yet hand the batch over. It
    was proven all the same before (only the main threads were read)."""
    d = _fixture("batch_lost")
    if busy:
        worker = next(p for p in d["processes"] if p["info"]["role"] == "dataloader_worker")
        for i, s in enumerate(worker["samples"]):
            s["cpu_seconds"] += 0.5 * i
            s["threads"][-1].update(name="QueueFeederThread", state="R", wchan=None, active=True, cpu_ticks=50 * i)
    dg = diagnose(evidence_from_dict(d))
    assert (dg.verdict.value, dg.root.cause) == ("hung", "dataloader.batch_lost"), dg.root
    assert dg.root.proves_hang is not busy, dg.root.proof


LOGGING_LOCK = (
    ("/usr/lib/python3.11/logging/__init__.py", "Handler.acquire", 923, "self.lock.acquire()"),
    ("/usr/lib/python3.11/logging/__init__.py", "Handler.handle", 977, "self.acquire()"),
    ("/usr/lib/python3.11/logging/__init__.py", "Logger.info", 1489, "self._log(INFO, msg, args, **kwargs)"),
    ("/tmp/x/preprocess.py", "tokenize_corpus", 7, 'log.info("tokenizing %s", path)'),
    ("/tmp/x/preprocess.py", "<module>", 8, "tokenize_corpus()"),
)


@pytest.mark.parametrize("how", ["waits", "waits_with_a_timeout", "exited"])
def test_a_child_left_with_one_thread_in_a_library_lock_proves_only_an_untimed_wait_for_it(how):
    """A child with one OS thread in a futex private to it with no timeout (logging's lock, as fork copies it held)
    can never go on: an edge to nobody. Its parent's wait for it is proven only where it has no timeout (a parent
    in ``Popen.wait(timeout=...)`` will end the child and go on: neither the child's own chain nor the parent's
    proves the job hung); a child that exited in the look waits on nothing."""
    d = _fixture("child_wait_subprocess")
    parent, child = d["processes"]
    like = child["samples"][0]["threads"][0]["frames"][0]
    lock = [dict(like, file=f, function=fn, line=n, code=c) for f, fn, n, c in LOGGING_LOCK]
    for s in child["samples"]:
        for t in s["threads"]:
            t["frames"] = lock
            t.update(syscall="futex", timeout=False, shared_futex=False, ctx_switches=0)
    if how == "waits_with_a_timeout":  # Popen.wait(timeout=600): a poll with short sleeps
        for i, s in enumerate(parent["samples"]):
            for t in s["threads"]:
                t["frames"][0] = dict(like, file="/usr/lib/python3.11/subprocess.py", function="Popen._wait", line=2060)
                t["frames"][0]["code"] = "time.sleep(delay)"
                t.update(syscall="clock_nanosleep", timeout=True, wakes_in=0.05, ctx_switches=40 * i)
    if how == "exited":
        child["exited"] = True
    dg = diagnose(evidence_from_dict(d))
    if how == "exited":
        assert dg.verdict.value == "slow" and not dg.root.proves_hang, dg.root
        return
    assert (dg.verdict.value, dg.root.cause) == ("hung", "child.wait"), dg.root
    assert dg.root.proves_hang is (how == "waits"), dg.root.proof
    if how == "waits":
        assert "one OS thread in every sample" in (dg.root.proof.fact if dg.root.proof else ""), dg.root.proof


def test_every_thread_blocked_is_said_only_where_every_thread_was():
    """Rank 1 waits on an event with one of its 4 threads blocked: the rest (gloo's and torch's own, unread) were not
    measured blocked, yet the words said "every thread blocked"."""
    from hangwatch.diagnose.code import deadlock_rule
    from hangwatch.diagnose.scene import Scene

    (hit,) = deadlock_rule(Scene.of(load("distributed_peer_stuck_names_culprit_rank")))
    assert "every thread of its own code blocked" in hit.finding.summary, hit.finding.summary
    assert "1 of its 4 threads (the rest: library or native) blocked" in hit.finding.evidence[0], hit.finding.evidence


def test_deadlocked_is_said_only_where_the_frames_show_the_cycle():
    """[1/5] words from facts: the deadlock namer says "is deadlocked" only where the frames show a cycle of locks
    (each thread's waited lock held by another's ``with``) or a lock its own thread holds further down; the recorded
    two-lock case whose frames show no holder says what was measured, every thread blocked."""
    d = diagnose(load("deadlock"))
    assert d.root.cause == "code.deadlock" and "deadlocked" not in d.root.summary, d.root.summary
    assert "waits with every thread blocked: 2 threads wait for locks" in d.root.summary, d.root.summary
    ev = load("deadlock")

    def holding(p):  # each waiting thread's frame now shows the other lock taken by a `with` around its line
        other = {"metrics_lock": "checkpoint_lock", "checkpoint_lock": "metrics_lock"}

        def one(x):
            threads = []
            for t in x.threads:
                f = t.frames[0] if t.frames else None
                waited = (f.code or "").split("#")[0].strip().removeprefix("with ").rstrip(":") if f else ""
                held = (replace(f, holds=(other[waited],)), *t.frames[1:]) if waited in other else t.frames
                threads.append(replace(t, frames=held))
            return replace(x, threads=tuple(threads))

        return replace(p, samples=tuple(one(x) for x in p.samples))

    d = diagnose(replace(ev, processes=tuple(holding(p) for p in ev.processes)))
    assert "is deadlocked: 2 threads each wait for a lock another of them holds" in d.root.summary, d.root.summary


def test_a_ring_no_cause_names_says_every_hop_and_how_to_break_it_and_its_twin_is_not_hung():
    """Two processes each writing to the full socket only the other reads (lambda_multiprocessing#17): the chain is a
    cycle that no namer knows; the finding says both hops (not only the first) and a ring's fix, with the full
    buffer's. Its twin, whose reader computes before it reads, is slow by the child's work, with no proof of a hang."""
    d = diagnose(load("a_ring_of_two_processes_each_writing_to_a_full_socket"))
    f = d.findings[0]
    assert d.verdict.value == "hung" and f.proof is not None and f.proof.kind.value == "hang", f
    assert f.summary.count("which is full") == 2 and ", while child (pid" in f.summary, f.summary
    assert f.fix == CYCLE_FIX + FULL_BUFFER_FIX, f.fix
    assert f.where is not None and Path(f.where.file or "").name == "mp_pipe_both_send_large.py"
    twin = diagnose(load("a_full_socket_whose_reader_computes_before_it_reads"))
    assert twin.verdict.value == "slow" and all(not x.proves_hang for x in twin.findings), twin.findings[0]


def test_a_read_of_a_multiprocessing_queue_only_its_reader_could_put_to_gets_the_queues_fix():
    """A spawned consumer reads its own copy of a module-level queue (DeadSimplePython#6): proven at once (only it holds
    the pipe's write end), and the fix is the queue's (made under __main__ and passed, a sentinel on every path), not
    that of a pipe whose write end a reader forgot to close."""
    d = diagnose(load("a_spawned_consumer_reading_its_own_module_level_queue"))
    f = d.findings[0]
    assert d.verdict.value == "hung" and f.proof is not None and f.proof.kind.value == "hang", f
    assert f.where is not None and Path(f.where.file or "").name == "spawn_module_level_queue_not_shared.py"
    assert f.fix == SELF_WAIT_FIX["queue"], f.fix


@pytest.mark.parametrize(
    ("hung", "healthy", "said"),
    [
        (
            "exit_joins_a_timer_due_in_a_day",
            "exit_joins_a_timer_due_within_the_bounds",
            "waits for its timer",
        ),
        (
            "an_event_loop_whose_next_timer_is_past_the_bounds",
            "an_event_loop_whose_next_timer_is_within_the_bounds",
            "with a timeout that ends in",
        ),
    ],
)
def test_a_timed_wait_whose_timer_the_kernel_shows_past_the_bounds_is_proven_and_within_them_alive(hung, healthy, said):
    """A futex wait's deadline (a threading.Timer of a day, joined at exit) and the least left of a poll's timeout (an
    event loop whose next timer is a backoff of 12 days: asyncio polls a day at most) are read from the kernel: past the
    job's bounds, no timeout ends the wait in time, and nothing else can (proven, at the Timer or the loop, in the
    measured words); their twins, due within the bounds, are alive (slow), with no proof of a hang."""
    d = diagnose(load(hung))
    f = d.findings[0]
    assert d.verdict.value == "hung" and f.proof is not None and f.proof.kind.value == "hang", f
    assert said in f.summary and ("1.0 days" in f.summary or "24.0 h" in f.summary), f.summary
    if "its timer" in f.summary:  # a timer is cancelled (a thread is stopped)
        assert "timer.cancel()" in f.fix[0] and "daemon=True" not in f.fix[0], f.fix
    twin = diagnose(load(healthy))
    assert twin.verdict.value == "slow" and all(not x.proves_hang for x in twin.findings), twin.findings[0]
    evidence = twin.findings[0].summary + " ".join(twin.findings[0].evidence)
    assert "timeout" in evidence or "fires in" in evidence, twin.findings[0]


def test_a_poll_whose_other_file_was_not_followed_is_no_wait_on_itself():
    """An event loop polls two sockets: its own wake-up pair (only it holds the other end) and one whose other end a
    child holds. Where the search of the host for that child was cut short (under load), the child's socket has no
    holder: it may still end the poll, so none of the poll's files is a wait, and the one held only by the loop
    proves nothing (the zoo's look-alike was declared hung, a cycle of one, once in three runs of its graph cases in
    parallel, a way to that outcome this test rebuilds). The poll on its own file alone is the hang's twin (zoo
    asyncio_future_never_resolved)."""
    from hangwatch.diagnose.graph import build_graph
    from hangwatch.diagnose.scene import Scene

    ev = load("an_event_loop_polling_a_child_socket_and_its_own")
    searched = "the host's processes were searched for 2 s only; one of the files a poll with no timeout waits on"
    cut = [
        replace(p, waits=tuple(replace(w, holders=(), note=searched) if w.holders else w for w in p.waits))
        for p in ev.processes
    ]
    d = diagnose(replace(ev, processes=tuple(cut)))
    assert d.verdict.value != "hung" and all(not f.proves_hang for f in d.findings), d.findings[0]
    loop = next(p for p in ev.processes if p.waits)
    # a third file, unfollowed, beside the two: no edge of the poll at all (the child's file would decide otherwise,
    # and the unfollowed one may end the poll first)
    third = replace(loop.waits[-1], path="a local socket (socket:[1])", holders=(), note=searched)
    more = replace(loop, waits=(*loop.waits, third))
    scene = Scene.of(replace(ev, processes=tuple(more if p is loop else p for p in ev.processes)))
    assert not [e for e in build_graph(scene).edges if e.resource == "socket"], build_graph(scene).edges
    assert [e for e in build_graph(Scene.of(ev)).edges if e.resource == "socket"]  # as recorded: the child's edge
    alone = replace(loop, waits=tuple(w for w in loop.waits if not w.holders))  # its own file is all it polls
    d = diagnose(replace(ev, processes=(alone,)))
    assert d.verdict.value == "hung" and d.findings[0].proves_hang, d.findings[0]


def _one_thread_throughout(ev: Evidence) -> Evidence:
    """The look with every thread but main given one id, once a sample: no thread ended in it."""
    p = ev.processes[0]
    last = next(t.tid for t in p.samples[-1].threads if t.tid != p.info.pid)

    def kept(threads):
        main = [t for t in threads if t.tid == p.info.pid]
        return (*main, *[replace(t, tid=last) for t in threads if t.tid != p.info.pid][-1:])

    return replace(ev, processes=(replace(p, samples=tuple(replace(s, threads=kept(s.threads)) for s in p.samples)),))


@pytest.mark.parametrize("frames", ["as_read", "none_read"])
def test_threads_that_end_during_the_look_are_a_change_and_its_twins_are_left_to_the_clock(frames):
    """The exit joins a chain of timers that ends by itself; under load four samples caught four Timer threads, three
    of them before py-spy read a frame. As read, the exit namer names a timer that ended in the look: it waits on
    nothing now (slow). With no frame read at all, no namer names it, and what moves decides: threads ended (slow), as
    a process that ends is a change. Both were hung at --min-stall, and the twin of the e2e test was killed. Left to
    the clock (hung, no proof), as before: the same look with one thread there throughout, none ended; the same look
    where the script's timer re-arms with no way out (the hang, exit_timers.py, read under the same load: its ends are
    the turns of that loop); and the same look where the newest sample read fewer threads than the kernel counted."""
    ev = load("an_exit_joined_to_a_chain_of_timers_caught_between_two")
    p = ev.processes[0]
    if frames == "none_read":
        bare = [
            replace(s, threads=tuple(t if t.tid == p.info.pid else replace(t, frames=()) for t in s.threads))
            for s in p.samples
        ]
        p = replace(p, samples=tuple(bare))
        ev = replace(ev, processes=(p,))
    d = diagnose(ev)
    said = [d.findings[0].summary, *d.findings[0].evidence]
    assert d.verdict.value == "slow", d.findings[0]
    assert any("ended during the look" in x for x in said), said
    forever = replace(p, rearms=tuple(replace(r, conditional=False) for r in p.rearms))
    first, *between, newest = p.samples  # a thread count the reads fell short of: no end, nor start, is known
    unread = replace(
        p,
        samples=(
            replace(first, num_threads=(first.num_threads or 0) + 1),
            *between,
            replace(newest, num_threads=(newest.num_threads or 0) + 1),
        ),
    )
    for twin in (_one_thread_throughout(ev), replace(ev, processes=(forever,)), replace(ev, processes=(unread,))):
        d2 = diagnose(twin)
        assert d2.verdict.value == "hung" and not d2.findings[0].proves_hang, d2.findings[0]


def test_a_one_shot_timer_that_fires_in_the_look_is_a_change_and_a_chains_turn_is_not():
    """The exit waits for a one-shot Timer beside a daemon heartbeat that re-arms; the look lands as the Timer fires
    (read out of its wait, running its function): a change, slow, said so (it was hung `unknown`, and the clock killed
    the healthy job in CI). The same sample with that Timer running the function of the user's that re-arms a Timer
    with no way out (``beat``, a turn of the heartbeat's loop) is no such change: hung, no proof, for the clock."""
    ev = load("an_exit_joined_to_a_one_shot_timer_read_as_it_fires")
    d = diagnose(ev)
    assert d.verdict.value == "slow" and "1 threading.Timer of main" in d.root.summary, d.root
    assert "fired during the look ('Thread-2')" in d.root.summary, d.root.summary
    p = ev.processes[0]
    *before, newest = p.samples
    turn = Frame("beat", p.rearms[0].file, p.rearms[0].line, p.rearms[0].code)
    threads = tuple(replace(t, frames=(turn, *t.frames)) if t.name == "Thread-2" else t for t in newest.threads)
    p = replace(p, samples=(*before, replace(newest, threads=threads)))
    d2 = diagnose(replace(ev, processes=(p,)))
    assert d2.verdict.value == "hung" and "fired" not in d2.root.summary and not d2.root.proves_hang, d2.root


@pytest.mark.parametrize(
    ("caught", "proven"),
    [
        (None, True),  # SigCgt not read (a capture recorded before it was): as before
        ((1 << 1) | (1 << 14), True),  # SIGINT, SIGTERM: they come to end the job, not to let it go on
        (1 << 16, True),  # SIGCHLD (torch's DataLoader keeps one) with no child that may exit: none comes
        ((1 << 1) | (1 << 9), False),  # a SIGUSR1 handler (Lightning's on SLURM, a worker's "done") may set the event
    ],
)
def test_a_signal_handler_that_may_let_the_job_go_on_is_a_way_out_of_the_main_threads_wait(caught, proven):
    """Python runs a handler on the main thread inside a lock's acquire, so an Event a handler sets may be set while
    the main thread waits on it: with such a handler (SigCgt), that wait is no proof of a hang (the clock decides);
    with only the signals that end a job, it still is."""
    ev = load("distributed_peer_stuck_names_culprit_rank")
    ev = replace(ev, processes=tuple(replace(p, info=replace(p.info, caught_signals=caught)) for p in ev.processes))
    d = diagnose(ev)
    assert d.verdict.value == "hung"
    assert (d.root.proof is not None) is proven, d.root.proof


def test_every_thread_asleep_in_a_private_futex_is_proof_and_an_unnamed_chain_is_placed_where_it_stops():
    """The QueueListener's process: proven by its threads' sleep alone, each named at its frame (the listener's in
    logging, not "no Python frame"); a lock-order ring of two threads through logging: every thread asleep, each
    said where it waits, a code.deadlock from the chain. The gossip's ranks: no cause and no proof, the clock decides; the place and the
    process are rank 0's, where main's chain stops, said in the summary."""
    d = diagnose(load("a_queue_listener_started_twice_joined_at_stop"))
    root = d.findings[0]
    assert root.proof is not None and "every one of the 2 threads" in root.proof.fact, root
    assert any("QueueListener.dequeue (handlers.py" in e for e in root.evidence), root.evidence
    d = diagnose(load("a_log_call_inside_a_lock_whose_repr_takes_another"))
    root = d.findings[0]  # the ring's other side is said at its own line, and no claim that nobody holds the lock
    assert "'uploader' on a lock at RunState.__repr__ (logging_repr_lock_order.py:24)" in root.proof.fact, root.proof
    assert "no thread of the process can run to release it" in "\n".join(root.evidence), root.evidence
    assert "no living thread holds it" not in root.proof.fact + "\n".join(root.evidence), root
    d = diagnose(load("a_rank_waiting_in_a_store_get_for_a_key_nobody_sets"))
    root = d.findings[0]
    assert root.proof is None and root.where is not None and root.where.rank == 0, root
    assert "its wait goes to rank 0" in root.summary and "worker (store_get_key_nobody_sets.py:" in root.summary, root


def test_ranks_making_one_group_under_names_that_differ_are_a_ring_and_under_one_name_are_meeting():
    """The group's name is kept as a short digest (torch's 40 hex digits are never written); two members' digests
    that differ are a ring of the ranks' group making, proven. The same look with one name for both is two ranks
    meeting in the store: no ring, no proof from it."""
    ev = load("ranks_making_one_group_under_names_that_differ")
    groups = [p.c10d for p in ev.processes if p.c10d is not None]
    assert len(groups) == 2 and all(g.op == "new_group" and g.members == (0, 1) for g in groups), groups
    assert groups[0].group != groups[1].group and all(len(g.group or "") == 16 for g in groups), groups
    root = diagnose(ev).findings[0]
    assert root.proof is not None and "under a name of its own, so they never meet" in root.summary, root
    one = groups[0].group
    same = replace(
        ev,
        processes=tuple(replace(p, c10d=replace(p.c10d, group=one)) if p.c10d is not None else p for p in ev.processes),
    )
    root = diagnose(same).findings[0]
    assert root.proof is None and "never meet" not in root.summary, root


def test_a_long_call_inside_a_loop_whose_locals_stay_is_never_said_to_advance():
    """The busy-loop namer took any proof of work with locals read as a loop that advances; one long call per turn
    of a loop is work (the same stack, on a line that calls, holding the GIL), and its locals stayed: said so."""
    root = diagnose(load("a_long_call_once_per_turn_of_a_loop_whose_locals_stay")).root
    assert "inside one call" in root.summary and "advance" not in root.summary, root.summary
    assert not any("advances" in e for e in root.evidence), root.evidence
    assert any("`i` stayed 0" in e for e in root.evidence), root.evidence


def test_a_worker_or_a_rank_in_one_long_call_per_turn_is_said_working_never_advancing():
    """The same reading words a busy DataLoader worker and a rank away from its peers' collective: working (one long
    call), its locals as read; "its loop advances" only where they changed (the busy-loop namer's twins)."""
    from hangwatch.diagnose.dataloader import _worker_named
    from hangwatch.diagnose.ends import rank_end
    from hangwatch.diagnose.scene import Scene

    scene = Scene.of(load("a_long_call_once_per_turn_of_a_loop_whose_locals_stay"))
    v = scene.views[0]
    t = v.main_thread
    ev: list[str] = []
    said = _worker_named(v, t, t.user_frame, "worker 0", ev)
    end = rank_end(scene, v, t)
    assert "one long call" in said.summary and "advances" not in said.summary + " ".join(ev), (said, ev)
    assert end.state == "working" and "one long call" in end.fact and "advances" not in end.fact, end


def test_a_spins_words_count_the_samples_that_held_the_gil():
    """A spin holds the GIL in at least half its samples (``ThreadView.spinning``), in the same function on any line of
    its loop: its evidence says how many held it, never "every sample" where one did not."""
    ev = load("busy_loop")
    root = diagnose(ev).root
    assert any("holding the GIL in every sample" in e for e in root.evidence), root.evidence
    assert any(e.startswith("the same innermost function in all") for e in root.evidence), root.evidence
    pid = root.where.pid

    def one_without(p: ProcessEvidence) -> ProcessEvidence:
        if p.info.pid != pid:
            return p
        first = p.samples[0]
        threads = tuple(replace(t, owns_gil=False) if t.tid == pid else t for t in first.threads)
        return replace(p, samples=(replace(first, threads=threads), *p.samples[1:]))

    n = len(next(p for p in ev.processes if p.info.pid == pid).samples)
    less = diagnose(replace(ev, processes=tuple(one_without(p) for p in ev.processes))).root
    assert less.cause == "code.busy_loop", less
    assert any(f"holding the GIL in {n - 1} of {n} samples" in e for e in less.evidence), less.evidence


def test_a_network_wait_seen_once_is_not_said_blocked():
    """One sample of a thread in a network call says where it is, never that it stays there: named with its state as
    read (brief), not "is blocked waiting for the network" (that only of one measured blocked, as the capture shows)."""
    ev = load("network_wait")
    root = diagnose(ev).root
    assert "is blocked waiting for the network" in root.summary, root.summary
    once = replace(ev, processes=tuple(replace(p, samples=p.samples[-1:]) for p in ev.processes))
    d = diagnose(once)
    assert d.root.cause == "io.network_wait" and d.verdict.value == "slow", d.root
    assert "blocked" not in d.root.summary and "(brief: seen in 1 sample" in d.root.summary, d.root.summary


def test_a_wait_any_of_several_children_may_end_follows_the_one_whose_own_chain_ends_soonest():
    """A pause() that any child may end (its exit or its kill sends a signal the handlers catch): two children asleep
    for a day and a shell blocked in wait4 for a `sleep 25` that then signals its parent. The chain follows the shell,
    whose own chain ends alive (a timer that wakes it), not a sleeper ranked first by its own state alone: slow, never
    hung (it was hung under inspect, the zoo's twin at first sight)."""
    d = diagnose(load("a_pause_a_childs_shell_signals_after_a_short_sleep"))
    assert d.verdict.value == "slow" and d.root.proof is None, d.root
    chain = next(c for c in d.graph.chains if c.hops[0].resource == "signal")
    assert chain.ending == "asleep" and len(chain.hops) == 2 and chain.hops[1].resource == "child", chain.lines()


def test_a_child_at_its_exit_is_said_to_flush_a_queue_only_where_its_frames_join_one():
    """A child in multiprocessing's exit (``util._exit_function``) joins its queues' feeders and its own children
    alike: "still flushing a multiprocessing.Queue" is said where its frames join a queue (``Queue._finalize_join``),
    not of every exit (it was said of any child in ``_exit_function``)."""
    ev = load("child_wait_queue_join_before_get")
    flushing = "the child is still flushing a multiprocessing.Queue that nobody reads (join before get)"
    assert flushing in diagnose(ev).root.evidence

    def joins_its_child(t):  # the same exit, joining a child of its own instead of the queue's feeder
        if not any(f.function == "_exit_function" for f in t.frames):
            return t
        at = next(i for i, f in enumerate(t.frames) if f.function == "Thread.join")
        join = replace(t.frames[at], function="Popen.wait", file=t.frames[at].file.replace("threading", "popen_fork"))
        return replace(t, frames=(join, *t.frames[at + 4 :]))  # Popen.wait, then _exit_function and below

    def without_a_queue(p: ProcessEvidence) -> ProcessEvidence:
        samples = tuple(
            replace(
                s,
                threads=tuple(
                    joins_its_child(t) for t in s.threads if not any("_feed" in f.function for f in t.frames)
                ),
            )
            for s in p.samples
        )
        return replace(p, samples=samples)

    exiting = diagnose(replace(ev, processes=tuple(without_a_queue(p) for p in ev.processes))).root
    assert exiting.cause == "child.wait" and flushing not in exiting.evidence, exiting.evidence


@pytest.mark.parametrize("native", [False, True])
def test_a_sole_python_releaser_beside_a_running_native_thread_is_not_said_to_be_the_only_one(native):
    """Main joins, at the interpreter's exit, a Timer's thread due within the bounds: alive either way. With a native
    thread of the process at work (an OpenMP pool, a library's core), that thread may act too: the words said "only
    its thread 'Thread-1' could" all the same; now they say only what was read."""
    d = _fixture("exit_joins_a_timer_due_within_the_bounds")
    if native:
        for i, s in enumerate(d["processes"][0]["samples"]):
            like = s["threads"][-1]
            s["threads"].append(dict(like, tid=like["tid"] + 7, name="omp", state="R", wchan=None, frames=[]))
            s["threads"][-1].update(cpu_ticks=50 * i, active=True, syscall=None, futex=None, timeout=False)
    dg = diagnose(evidence_from_dict(d))
    said = " ".join(line for c in dg.graph.chains for line in c.lines()) if dg.graph else ""
    assert dg.verdict.value == "slow", dg.root
    assert ("only its thread 'Thread-1'" in said) is not native, said
    assert ("of its Python threads only 'Thread-1'" in said) is native, said


@pytest.mark.parametrize("how", ["fork", "fork_retitled", "spawn"])
def test_a_worker_asleep_in_openmp_is_stuck_after_fork_only_where_it_was_forked(how):
    """A DataLoader worker asleep inside libgomp: after fork, the parent's OpenMP threads are gone and it waits for
    them forever (fork.inherited_lock), also where it renamed itself (setproctitle: its command line is not its
    parent's, but popen_fork's frame stays on its stack). A worker started by spawn was no fork: it was said "stuck in
    OpenMP after fork" all the same, from its role alone."""
    from hangwatch.diagnose.native import native_fork_rule
    from hangwatch.diagnose.scene import Scene
    from hangwatch.records.evidence import Frame, NativeStack

    ev = load("dataloader_worker_stuck-dl_worker_blocked")
    worker = next(p for p in ev.processes if p.info.role.value == "dataloader_worker")
    user = next(f for s in worker.samples for t in s.threads for f in t.frames if "dataloader" not in f.file)
    gomp = Frame(function="gomp_team_barrier_wait_end", file="/usr/lib/libgomp.so.1", line=0, native=True)
    stack = NativeStack(worker.info.pid, (gomp, user))
    spawned = Frame(function="_main", file="/usr/lib/python3.11/multiprocessing/spawn.py", line=131)

    def started(s):  # under spawn no popen_fork frame is left on the worker's stack
        frames = lambda t: tuple(spawned if "popen_fork" in f.file else f for f in t.frames)  # noqa: E731
        return s if how != "spawn" else replace(s, threads=tuple(replace(t, frames=frames(t)) for t in s.threads))

    samples = tuple(started(s) for s in worker.samples)
    info = replace(worker.info, forked_from_parent=how == "fork")
    moved = replace(worker, info=info, native=(stack,), samples=samples)
    hits = native_fork_rule(Scene.of(replace(ev, processes=tuple(moved if p is worker else p for p in ev.processes))))
    assert [h.finding.cause for h in hits] == ([] if how == "spawn" else ["fork.inherited_lock"])


@pytest.mark.parametrize("wakes_in", [None, 3500.0])
def test_a_ranks_sleep_read_from_its_codes_literal_is_said_to_end_at_most_then(wakes_in):
    """Rank 1 sleeps in `time.sleep(3600)` while rank 0 waits in the collective. The kernel's time left is when it
    ends (proof past the bounds); the literal in its code is only the longest it may take, since when the sleep began
    is not read: it was said "ends in 1.0 h" all the same."""
    d = _fixture("distributed_peer_stuck_names_culprit_rank")
    rank1 = next(p for p in d["processes"] if p["info"]["rank"] == 1)
    for s in rank1["samples"]:
        t = s["threads"][0]
        at = dict(t["frames"][0], function="load", file="/job/dist_peer.py", line=30, code="time.sleep(3600)")
        t.update(frames=[at], syscall="clock_nanosleep", wakes_in=wakes_in, timeout=True, futex=None)
    dg = diagnose(evidence_from_dict(d))
    assert dg.verdict.value == ("slow" if wakes_in is None else "hung"), dg.root
    assert ("ends in 1.0 h at most (its code's literal" in dg.root.summary) is (wakes_in is None), dg.root.summary


def test_threads_polling_a_file_lock_their_own_process_holds_prove_a_hang_only_where_no_other_thread_may_act():
    """A pool's threads each poll a FileLock on the path their own process holds (no timeout): they let go of nothing,
    and main, which took the lock, waits for their futures: proven, at main's line. With a thread that computes
    (its twin), or with the pollers' acquire able to time out, nothing is proven."""
    hang = load("pool_threads_poll_a_file_lock_their_own_process_holds")
    d = diagnose(hang)
    assert (d.verdict.value, d.root.cause, d.root.proves_hang) == ("hung", "code.deadlock", True), d.root
    assert d.root.where is not None and d.root.where.line in marker_lines("filelock_same_path_taken_in_worker_thread")
    assert "thread 'download_0' waits with no timeout for a file lock" in d.root.summary, d.root.summary
    assert "(3 more poll for it the same way)" in d.root.summary, d.root.summary
    timed = replace(
        hang,
        processes=tuple(replace(p, waits=tuple(replace(w, timeout=True) for w in p.waits)) for p in hang.processes),
    )
    assert not diagnose(timed).root.proves_hang
    twin = diagnose(load("pool_threads_poll_a_file_lock_held_while_main_waits_for_a_working_thread"))
    assert twin.verdict.value == "progressing" and not twin.root.proves_hang, twin.root


def marker_lines(case: str) -> set[int]:
    """The ``# HANG-HERE`` lines of a zoo case (where a hang may be named: the poll's, main's)."""
    lines = (Path(__file__).resolve().parents[2] / "bench" / "zoo" / f"{case}.py").read_text().splitlines()
    return {i for i, text in enumerate(lines, 1) if "# HANG-HERE" in text}


@pytest.mark.parametrize("gil", [False, True])
def test_a_holder_at_full_cpu_inside_one_call_is_alive_only_where_it_releases_the_gil(gil):
    """A flock's holder compresses with zlib (the GIL released) on one line at full CPU: alive, without proof (slow,
    never ended at --min-stall). The same call holding the GIL in a library's own Python loop (`while not
    self.ready: pass` in site-packages, under the user's line) is no native call: what it does is unread, and the
    wait is not called alive for it."""
    d = _fixture("a_lock_holder_at_full_cpu_in_one_native_call")
    holder = next(p for p in d["processes"] if p["info"]["role"] == "child")
    spin = {"function": "Client.wait_ready", "file": "/venv/lib/python3.11/site-packages/client/core.py", "line": 10}
    spin["code"] = "while not self.ready: pass"
    for s in holder["samples"]:
        t = s["threads"][0]
        t["owns_gil"] = gil
        t["frames"] = [dict(t["frames"][0], **spin), *t["frames"]] if gil else t["frames"]
    dg = diagnose(evidence_from_dict(d))
    said = " ".join(line for c in dg.graph.chains for line in c.lines()) if dg.graph else ""
    assert ("inside one call that releases the GIL" in said) is not gil, said
    assert (dg.verdict.value == "slow") is not gil, dg.root
    assert not dg.root.proves_hang and not dg.root.proves_work, dg.root


THREAD_DIED = (
    "Exception in thread worker (run):\nTraceback (most recent call last):\n"
    '  File "/srv/job/a.py", line 3, in run\n    d["x"]\nKeyError: \'x\'\n'
)
CHAINED = (
    "\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n"
    '  File "/srv/job/a.py", line 5, in run\n    raise ValueError("bad") from e\nValueError: bad\n'
)
LATER = 'step 5\nTraceback (most recent call last):\n  File "/srv/job/b.py", line 9, in main\n    x()\nRuntimeError: later\n'


@pytest.mark.parametrize(
    ("log", "said"),
    [
        (THREAD_DIED + LATER, "KeyError: 'x' at a.py:3 (run)"),  # not the traceback printed after it
        (THREAD_DIED + CHAINED + LATER, "ValueError: bad at a.py:5 (run)"),  # of a chain, the last: what ended it
        ("[rank0]: " + THREAD_DIED, None),  # a prefixed line is not read as Python's own (it only misses)
    ],
)
def test_a_thread_that_ended_on_an_exception_is_read_with_what_ended_it(log, said):
    from hangwatch.diagnose.raised import thread_deaths

    found = thread_deaths(log)
    assert [r.text().removeprefix("raised ") for _, r in found] == ([said] if said else []), found
    assert all(name == "worker (run)" for name, _ in found)


@pytest.mark.parametrize(
    ("hung", "healthy", "cause", "line", "said"),
    [
        (
            "a_handler_lock_held_by_a_writer_of_a_pipe_only_main_drains",
            "a_handler_lock_held_while_a_thread_opens_the_pipes_reader",
            "code.deadlock",
            34,
            "thread 'MainThread' on a lock at <module>",
        ),
        (
            "a_loopback_request_in_the_accept_queue_of_its_own_listener",
            "a_loopback_request_whose_server_thread_accepts_late",
            "io.network_wait",
            31,
            "on a connection that waits in the accept queue of a listening socket its own process holds: no thread of "
            "it had accepted the connection when it was read",
        ),
    ],
)
def test_a_wait_only_its_own_blocked_process_could_end_is_proven_and_its_twin_is_alive(
    hung, healthy, cause, line, said
):
    """Two waits that only the waiter's own process could end, each a zoo case: a loader thread blocked writing into a
    full pipe that only main drains, holding logging's handler lock (taken inside logging), which main's own log call
    waits on; a loopback request whose connection waits in the accept queue of the job's own listening socket, the
    thread that would accept not started. Each is proven at main's line, in words that say the lock or the accept
    queue (the request is named a network wait, as a stand-in for a remote server that never answers is, but said as
    what the kernel shows). The twins (the pipe drained by a thread that opens its sink first; a server
    thread that accepts after it loads) are slow, with no proof of a hang."""
    d = diagnose(load(hung))
    f = d.findings[0]
    assert (d.verdict.value, f.cause.value, f.proof and f.proof.kind.value) == ("hung", cause, "hang"), f
    assert f.where is not None and f.where.line == line, f.where
    assert said in f.summary, f.summary
    twin = diagnose(load(healthy))
    assert twin.verdict.value == "slow" and all(not x.proves_hang for x in twin.findings), twin.findings[0]

"""The wait-for graph (issue [1/5]): who waits on whom, and whether the end of the chain can ever move.

Both ways on real processes (a parent in os.waitpid for a forked child: the child packs a shard at full CPU,
its locals walking the data, and is waited for; the same child spinning on a state nobody changes is a hang),
and the chain follower on tables: every ending decides as documented, and an inverted one fails here.

Here the tests that start no process; those that do are in tests/e2e/test_wait_graph.py.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import psutil
import pytest
from conftest import SCENARIOS, marker

from hangwatch.diagnose.chains import ENDINGS, Edge, Node
from hangwatch.diagnose.graph import _follow
from hangwatch.records.evidence import MP_VALUE
from hangwatch.records.incident import ProofKind, Verdict


# --- the chain follower, on tables ---------------------------------------------------------------------------
def _graph(states: dict[str, str], edges: list[tuple[str, str, str]]) -> tuple[dict[str, Node], dict[str, list[Edge]]]:
    nodes = {
        n: Node(n, n, s, f"measured {s}", proves_work=s == "working", single_minded=s == "blocked")
        for n, s in states.items()
    }
    out: dict[str, list[Edge]] = {}
    for a, b, res in edges:
        out.setdefault(a, []).append(Edge(a, b, res, f"{a} waits for {b}"))
    return nodes, out


@pytest.mark.parametrize(
    ("end_state", "verdict", "proof"),
    [
        ("gone", Verdict.HUNG, ProofKind.HANG),
        ("nobody", Verdict.HUNG, ProofKind.HANG),
        ("person", Verdict.HUNG, ProofKind.HANG),
        ("stopped", Verdict.HUNG, ProofKind.HANG),
        ("blocked", Verdict.HUNG, None),
        ("spinning", Verdict.HUNG, None),
        ("idle", Verdict.HUNG, None),
        ("working", Verdict.SLOW, ProofKind.WORK),
        ("asleep", Verdict.SLOW, None),
        ("wakes", Verdict.SLOW, None),
        ("unknown", None, None),
    ],
)
def test_each_ending_decides(end_state, verdict, proof):
    nodes, out = _graph({"a": "blocked", "b": "blocked", "c": end_state}, [("a", "b", "child"), ("b", "c", "lock")])
    chain = _follow("a", nodes, out)
    assert chain is not None
    assert [h.holder for h in chain.hops] == ["b", "c"]
    assert chain.ending == end_state and chain.verdict == verdict
    assert (chain.proof.kind if chain.proof else None) == proof
    assert chain.lines()[0] == "a waits for b" and chain.lines()[-1].startswith("=> ")


@pytest.mark.parametrize("resource", ["child", "pipe", "pipe_full", "socket", "dataloader batch"])
def test_a_holder_gone_from_a_wait_its_exit_ends_is_the_end_of_the_wait(resource):
    """A child's status, a pipe's or a socket's end of file: the holder's exit ends the wait (a compile's helper
    caught exiting during the look is no hang); a DataLoader worker leaving at its epoch's end (or dying: the main
    process raises within seconds) is no hang either: the chain says the wait ends (slow), and no clock calls it hung;
    a lock's holder gone (above) leaves the lock held."""
    nodes, out = _graph({"a": "blocked", "c": "gone"}, [("a", "c", resource)])
    chain = _follow("a", nodes, out)
    assert chain is not None and chain.ending == "ended" and chain.verdict == Verdict.SLOW and chain.proof is None
    assert "ends this wait" in chain.lines()[-1]


def test_a_cycle_is_proof():
    nodes, out = _graph({"a": "blocked", "b": "blocked"}, [("a", "b", "semaphore"), ("b", "a", "semaphore")])
    chain = _follow("a", nodes, out)
    assert chain is not None and chain.ending == "cycle" and chain.verdict == Verdict.HUNG
    assert chain.proof is not None and chain.proof.kind == ProofKind.HANG


def test_a_cycle_through_a_process_with_another_thread_that_may_run_is_no_proof():
    """Nodes are processes: a cycle proves nothing when one of them has another thread that could still read
    the pipe or release the lock."""
    nodes, out = _graph({"a": "blocked", "b": "blocked"}, [("a", "b", "child"), ("b", "a", "pipe_full")])
    nodes["b"] = Node("b", "b", "blocked", "measured", single_minded=False)
    chain = _follow("a", nodes, out)
    assert chain is not None and chain.ending == "blocked" and chain.proof is None


def test_of_several_holders_a_working_one_decides_but_a_batch_waits_for_the_stuck_worker():
    nodes, out = _graph(
        {"m": "blocked", "w1": "blocked", "w2": "working"}, [("m", "w1", "child"), ("m", "w2", "child")]
    )
    chain = _follow("m", nodes, out)
    assert chain is not None and chain.end.id == "w2" and chain.ending == "working"
    nodes, out = _graph(
        {"m": "blocked", "w1": "working", "w2": "blocked"},
        [("m", "w1", "dataloader batch"), ("m", "w2", "dataloader batch")],
    )
    chain = _follow("m", nodes, out)
    assert chain is not None and chain.end.id == "w2" and chain.ending == "blocked"


def test_a_waiter_with_no_edge_has_no_chain():
    nodes, out = _graph({"a": "working"}, [])
    assert _follow("a", nodes, out) is None


def test_the_endings_table_is_what_the_docs_say():
    proven = {k for k, (_, p) in ENDINGS.items() if p}
    assert proven == {"cycle", "gone", "nobody", "person", "stopped", "long_sleep"}
    assert ENDINGS["working"][0] == Verdict.SLOW and ENDINGS["unknown"][0] is None


# --- pipes: the write end's holders, in the job or outside it ------------------------------------------------


# --- a loop with no way out ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "endless"),
    [
        ("while True:\n    time.sleep(1)", True),
        ("while 1:\n    sleep(0.2)\n    continue", True),
        ("while True:\n    time.sleep(1)\n    if done:\n        break", False),
        ("while True:\n    poll()\n    time.sleep(1)", False),  # a call may raise or exit
        ("while True:\n    backoff.sleep()", False),  # an object's own sleep is the user's code: it may raise
        ("while not done:\n    time.sleep(1)", False),
        ("while True:\n    try:\n        time.sleep(1)\n    except KeyboardInterrupt:\n        pass", False),
        ("for _ in range(10):\n    time.sleep(1)", False),
        (None, False),
    ],
)
def test_never_exits(source, endless):
    from hangwatch.diagnose.loops import never_exits

    assert (never_exits(source) is not None) is endless


@pytest.mark.parametrize(
    ("source", "endless"),
    [
        ("while not stop.wait(1.0):\n    pass", True),
        ("while not self._stop.is_set():\n    self._stop.wait(0.5)", True),
        ("while not stop.is_set():\n    time.sleep(1)", True),
        ("while not stop.is_set():\n    other.wait(1)", False),  # another event: it may be set by what it waits on
        ("while not stop.wait(1.0):\n    flush()", False),  # a call may set it, raise or exit
        ("while not stop.wait(1.0):\n    if idle:\n        break", False),
        ("while not stop.is_set():\n    time.sleep(delay())", False),
        ("while not stop.is_set():\n    clock.sleep(seconds=self.backoff())", False),  # a call in a keyword too
        ("while stop.is_set():\n    time.sleep(1)", False),
    ],
)
def test_a_loop_whose_only_way_out_is_an_event_never_exits_only_where_its_wait_is_private(source, endless):
    """A loop that ends only when its event is set, and does nothing but wait, never ends where no thread can set
    the event; only where the kernel read the thread in a futex private to its process (a threading event's): a
    multiprocessing event's futex is shared, and another process may set it."""
    from hangwatch.diagnose.loops import never_exits

    assert (never_exits(source, private_wait=True) is not None) is endless
    assert never_exits(source) is None


@pytest.mark.parametrize(
    ("source", "header", "kind"),
    [
        ("import threading\nstop = threading.Event()\n", "while not stop.is_set()", "threading.Event"),
        ("import threading as th\nstop = th.Event()\n", "while not stop.wait(1.0):", "threading.Event"),
        (
            "from threading import Event\nclass H:\n def __init__(self):\n  self._s = Event()\n",
            "while not self._s.is_set()",
            "threading.Event",
        ),
        ("import multiprocessing\nstop = multiprocessing.Event()\n", "while not stop.is_set()", None),
        ("from multiprocessing import Event\nstop = Event()\n", "while not stop.is_set()", None),
        ("import threading\nstop = threading.Event()\ndef f(stop):\n pass\n", "while not stop.is_set()", None),
        (
            "import threading\nstop = threading.Event()\ndef f(e):\n global stop\n stop = e\n",
            "while not stop.is_set()",
            None,
        ),
        ("import threading\nstop = threading.Event()\nfor stop in []:\n pass\n", "while not stop.is_set()", None),
        ("from signals import stop\n", "while not stop.is_set()", None),  # bound elsewhere: not read here
        (
            "import threading\nclass F:\n def is_set(self):\n  return False\nstop = F()\n",
            "while not stop.is_set()",
            None,
        ),  # a method of the job's own (it may read a file)
        ("import threading\nstop = threading.Event()\n", "while not stop:", None),
        ("import threading\nstop = threading.Event()\n", "while True", None),
        # what its review found: the maker bound otherwise too, a class's own binding, a name set by string
        (
            "if MP:\n from multiprocessing import Event\nelse:\n from threading import Event\nstop = Event()\n",
            "while not stop.is_set()",
            None,
        ),
        (
            "import multiprocessing\nfrom threading import Event\nEvent = multiprocessing.Event\nstop = Event()\n",
            "while not stop.is_set()",
            None,
        ),
        (
            "import threading\nimport multiprocessing as mp\nthreading = mp.get_context()\nstop = threading.Event()\n",
            "while not stop.is_set()",
            None,
        ),
        (
            "import threading, multiprocessing\nclass H:\n stop = multiprocessing.Event()\n def __init__(self):\n"
            "  self.stop = threading.Event()\n",
            "while not self.stop.is_set()",
            None,
        ),
        (
            "import threading\nclass H:\n def __init__(self, ev):\n  self._s = threading.Event()\n"
            "  setattr(self, '_s', ev)\n",
            "while not self._s.is_set()",
            None,
        ),
        ("import threading\nfrom common import *\nstop = threading.Event()\n", "while not stop.is_set()", None),
        ("import threading\nstop = threading.Event()\nglobals()['stop'] = 1\n", "while not stop.is_set()", None),
        (
            "import threading\nstop = threading.Event()\nmatch x:\n case {'s': stop}: pass\n",
            "while not stop.is_set()",
            None,
        ),
        ("from threading import Event as E\nstop = E()\n", "while not stop.is_set()", "threading.Event"),
        # its second review: another object's attribute, a base from another file, threading's Event replaced, an
        # attribute the loop's own class never binds; a Thread subclass that binds its own is read
        (
            "import threading, multiprocessing\nclass H:\n def __init__(self):\n  self._s = threading.Event()\n"
            "hb = H()\nhb._s = multiprocessing.Event()\n",
            "while not self._s.is_set()",
            None,
        ),
        (
            "import threading, lib\nclass H(lib.Worker):\n def __init__(self):\n  self._s = threading.Event()\n",
            "while not self._s.is_set()",
            None,
        ),
        (
            "import threading, multiprocessing\nthreading.Event = multiprocessing.Event\nstop = threading.Event()\n",
            "while not stop.is_set()",
            None,
        ),
        (
            "import threading\nclass H:\n def run(self):\n  pass\nclass U:\n def __init__(self):\n"
            "  self._s = threading.Event()\n",
            "while not self._s.is_set()",
            None,
        ),
        (
            "import threading\nclass H(threading.Thread):\n def __init__(self):\n  self._s = threading.Event()\n",
            "while not self._s.is_set()",
            "threading.Event",
        ),
    ],
)
def test_the_flag_a_loop_tests_is_a_threading_event_only_where_its_file_binds_it_to_nothing_else(source, header, kind):
    """A thread that sleeps between reads of its flag is never seen in a futex: its file says what the flag is,
    where every binding of the name in it is ``threading.Event()`` (memory of its process alone); any other binding,
    a parameter, an import or a loop's target, says nothing."""
    from hangwatch.capture.flags import flag_kind

    assert flag_kind(source, header, 3) == kind  # the loop at line 3: in class H where the source has one


@pytest.mark.parametrize(
    ("source", "header", "line", "kind"),
    [
        # the loop's own scope binds it to multiprocessing's Value, however the file names it
        ("import multiprocessing as mp\nflag = mp.Value('i', 0)\n", "while flag.value == 0", 3, MP_VALUE),
        ("from multiprocessing import Value\nflag = Value('i', 0)\n", "while not flag.value", 3, MP_VALUE),
        (
            "import multiprocessing as mp\nflag = mp.get_context('fork').RawValue('i')\n",
            "while flag.value < 3",
            3,
            MP_VALUE,
        ),
        (
            "import multiprocessing as mp\nctx = mp.get_context()\nflag = ctx.Value('i')\n",
            "while 0 == flag.value",
            4,
            MP_VALUE,
        ),
        # a parameter of another function binds another name; the loop's function binding it is its scope
        (
            "import multiprocessing as mp\ndef child(flag):\n pass\nflag = mp.Value('i')\n",
            "while not flag.value",
            5,
            MP_VALUE,
        ),
        (
            "import multiprocessing as mp\ndef f():\n flag = mp.Value('i')\n while not flag.value:\n  pass\n",
            "while not flag.value",
            4,
            MP_VALUE,
        ),
        # anything else: a manager's Value (its server process holds it), a parameter of the loop's own function,
        # a `global` that another function may rebind, a test of anything but the number, another module's Value
        ("import multiprocessing as mp\nflag = mp.Manager().Value('i', 0)\n", "while flag.value == 0", 3, None),
        (
            "import multiprocessing as mp\ndef f(flag):\n while not flag.value:\n  pass\n",
            "while not flag.value",
            3,
            None,
        ),
        (
            "import multiprocessing as mp\nflag = mp.Value('i')\ndef g():\n global flag\n flag = 1\n",
            "while not flag.value",
            6,
            None,
        ),
        ("import multiprocessing as mp\nflag = mp.Value('i')\n", "while flag.value == other", 3, None),
        ("import lib\nflag = lib.Value('i')\n", "while flag.value == 0", 3, None),
        # its review: a name the file binds to something else too is no maker; an item is no name a scope binds
        (
            "from multiprocessing import Value\nif R:\n from kv import Value\nflag = Value('i')\n",
            "while flag.value",
            5,
            None,
        ),
        (
            "import multiprocessing as mp\ndef f():\n import kv as mp\nflag = mp.Value('i')\n",
            "while flag.value",
            5,
            None,
        ),
        (
            "import multiprocessing as mp\nctx = mp.get_context()\nctx = kv.connect()\nflag = ctx.Value('i')\n",
            "while flag.value",
            5,
            None,
        ),
        ("import multiprocessing as mp\nflag = mp.get_context('fork')\n", "while flag.value == 0", 3, None),
        (
            "import multiprocessing as mp\ndef f():\n flag = [kv()]\n while flag[0].value:\n  pass\nflag[0] = mp.Value('i')\n",
            "while flag[0].value",
            4,
            None,
        ),
        ("from multiprocessing import Value as V\nflag = V('i')\n", "while flag.value == 0", 3, MP_VALUE),
        (
            "import multiprocessing as mp\nflag = mp.Value('i')\ndef sleep(s):\n flag.value = 1\n",
            "while flag.value == 0",
            5,
            None,
        ),
        ("import multiprocessing.sharedctypes as sc\nflag = sc.RawValue('i')\n", "while flag.value == 0", 3, MP_VALUE),
    ],
)
def test_a_loop_on_a_multiprocessing_values_number_is_read_from_the_scope_it_reads_the_name_from(
    source, header, line, kind
):
    """``while flag.value == 0: time.sleep(...)`` polls shared memory the kernel never shows a wait on: its file says
    the flag is a multiprocessing Value where the scope the loop reads the name from binds it only to one (a child
    function's parameter of the same name is another name)."""
    from hangwatch.capture.flags import flag_kind

    assert flag_kind(source, header, line) == kind


def test_the_loop_read_for_a_line_is_one_that_encloses_it_in_its_own_function(tmp_path):
    """A thread in one long sleep below another function's loop is not credited with that loop (its review found a
    `delayed_upload` sleeping 600 s read as the heartbeat's `while not stop.is_set()` above it)."""
    from hangwatch.capture.locals import _loop_at

    f = tmp_path / "job.py"
    f.write_text(
        "import threading, time\n"  # 1
        "stop = threading.Event()\n"  # 2
        "def heartbeat():\n"  # 3
        "    while not stop.is_set():\n"  # 4
        "        time.sleep(1)\n"  # 5
        "def delayed_upload():\n"  # 6
        "    if True:\n"  # 7
        "        time.sleep(600)\n"  # 8
        "    stop.set()\n"  # 9
        "def drain():\n"  # 10
        "    while pending():\n"  # 11
        "        step()\n"  # 12
        "    time.sleep(600)\n"  # 13
    )
    os.utime(f, (0, 0))  # written before this process started: the code it would run
    loop = _loop_at(str(f), 5, os.getpid())
    assert loop is not None and loop.line == 4 and loop.flag == "threading.Event", loop
    assert _loop_at(str(f), 8, os.getpid()) is None  # in another function than the loop above it
    assert _loop_at(str(f), 13, os.getpid()) is None  # below a loop of its own function that ended above it
    later = psutil.Process().create_time() + 10  # written after this process started: maybe not the code running
    os.utime(f, (later, later))
    loop = _loop_at(str(f), 5, os.getpid())
    assert loop is not None and loop.flag is None, loop


def test_a_loop_whose_header_runs_over_lines_is_read_whole(tmp_path):
    """A loop header that brackets carry over two lines (`while (p.poll() is None` / `and waited < 12.0):`) had no
    colon on its first line and was not read at all: its counted way out went unseen, and a healthy job that gives
    its child 12 s was killed by the child's proof. Its header is read whole, on one line; its body after it."""
    from hangwatch.capture.locals import _loop_at

    f = tmp_path / "job.py"
    f.write_text(
        "def run(p):\n"  # 1
        "    waited = 0.0\n"  # 2
        "    while (p.poll() is None\n"  # 3
        "           and waited < 12.0):\n"  # 4
        "        waited += 0.5\n"  # 5
        "        time.sleep(0.5)\n"  # 6
        "    for item in (\n"  # 7
        "        items\n"  # 8
        "    ):\n"  # 9
        "        time.sleep(1)\n"  # 10
    )
    loop = _loop_at(str(f), 6, os.getpid())
    assert loop is not None and loop.line == 3 and loop.header == "while (p.poll() is None and waited < 12.0)", loop
    assert loop.body is not None and loop.body.splitlines()[2:] == ["    waited += 0.5", "    time.sleep(0.5)"], loop
    loop = _loop_at(str(f), 10, os.getpid())
    assert loop is not None and loop.line == 7 and loop.header == "for item in ( items )", loop


@pytest.mark.parametrize(
    ("text", "header"),
    [
        ('while not buf.endswith("\\""):\n', 'while not buf.endswith("\\"")'),  # (an escaped quote)
        ("while (not done  # don't spin (yet)\n       and ready):\n", "while (not done and ready)"),  # (a comment)
        ("while tries < n and \\\n      p.poll() is None:  # retry\n", "while tries < n and p.poll() is None"),
        ("        for w in workers\n        if w.poll()\n    ]\n    rest = ready[1:]\n", None),  # (a comprehension's)
        ("while (p.poll() is None\n", None),  # (no colon yet)
    ],
)
def test_a_loop_header_is_read_as_python_reads_it(text, header):
    """A header is read up to its colon outside brackets, strings and comments, on one line; a `for` line of a
    comprehension spread over lines, whose brackets close what it did not open, is no loop's header."""
    from hangwatch.capture.locals import _header

    assert _header(text) == header


# --- a sleep's timer, read from the kernel ------------------------------------------------------------------


def test_a_chain_through_a_wait_that_times_out_proves_nothing():
    nodes, out = _graph({"a": "blocked", "b": "gone"}, [])
    out = {"a": [Edge("a", "b", "file lock", "a waits for b", timeout=True)]}
    chain = _follow("a", nodes, out)
    assert chain is not None and chain.ending == "gone" and chain.proof is None


def test_the_page_draws_the_chain_behind_the_root_cause():
    from hangwatch.causes import Cause
    from hangwatch.records.incident import Action, Finding, Incident, Where
    from hangwatch.report.html import chain_html

    graph = {
        "nodes": [
            {"id": "pid:10", "label": "main (pid 10)", "state": "blocked", "fact": "read", "in_job": True},
            {
                "id": "pid:14",
                "label": "pid 14 (`tar`, outside the job)",
                "state": "blocked",
                "fact": "parked",
                "in_job": False,
            },
        ],
        "edges": [],
        "chains": [
            {
                "waiter": "pid:10",
                "end": "pid:14",
                "ending": "blocked",
                "verdict": "hung",
                "proof": None,
                "hops": [
                    {
                        "waiter": "pid:10",
                        "holder": "pid:14",
                        "resource": "pipe",
                        "timeout": False,
                        "words": "main reads a pipe",
                    }
                ],
                "words": ["main reads a pipe", "-> pid 14 is blocked: parked", "=> the holder is blocked"],
            }
        ],
    }
    where = Where(pid=10, rank=None, tid=10, file="/x/prep.py", line=12, function="read_manifest")
    inc = Incident(
        verdict=Verdict.HUNG,
        detected_at=0.0,
        last_progress=None,
        attempt=1,
        action=Action.NONE,
        processes=(),
        findings=(Finding(Cause.PROCESS_WAITS_ON, 0.9, "s", where),),
        graph=graph,
    )
    page = chain_html(inc)
    assert page.count('class="node') == 2 and 'class="node end out"' in page, page
    assert "pipe (no timeout)" in page and "the holder is blocked" in page
    assert inc.root_chain() == ("main reads a pipe", "-> pid 14 is blocked: parked", "=> the holder is blocked")
    back = Incident.from_dict(inc.to_dict())
    assert back.graph == graph
    assert (
        chain_html(
            Incident(
                verdict=Verdict.HUNG,
                detected_at=0.0,
                last_progress=None,
                attempt=1,
                action=Action.NONE,
                processes=(),
                findings=(),
            )
        )
        == ""
    )


def test_filelock_4_3s_resolved_wait_tuple_says_the_acquire_has_no_timeout():
    """filelock 4.3 passes `timeout: None` to acquire and resolves it into a `wait` tuple (recorded here with
    py-spy --locals): the wait with no timeout is read from there (a CI run with 4.3.1 lost "with no timeout")."""
    from hangwatch.capture.waits import FILELOCK_WAIT, _filelock_of

    m = FILELOCK_WAIT.match("(True, None, -1, 0.05, 1977.137927692)")
    assert m is not None and float(m.group(2)) < 0
    m = FILELOCK_WAIT.match("(True, None, 600.0, 0.05, 1977.1)")
    assert m is not None and float(m.group(2)) == 600.0
    assert FILELOCK_WAIT.match("<FileLockContext at 0x7f>") is None

    def polling(wait: str) -> dict:  # one thread of a py-spy dump with locals, in filelock's acquire
        frame = {"filename": "/venv/lib/python3.11/site-packages/filelock/_core/_acquire.py"}
        frame["locals"] = [{"name": "lock_filename", "repr": "'/data/.lock'"}, {"name": "wait", "repr": wait}]
        return {"frames": [frame]}

    assert _filelock_of(polling("(True, None, -1, 0.05, 1977.1)")) == ("/data/.lock", False, False)
    # a cancel_check callback may end the acquire though it has no timeout: never read as one that cannot end
    assert _filelock_of(polling("(True, <function stop at 0x7f>, -1, 0.05, 1977.1)")) == ("/data/.lock", True, False)


def test_bytes_in_one_call_are_no_proof_of_work():
    """A write blocked on a full pipe returns its 64 KiB once when a stack read interrupts it: one call moving
    bytes is no work; the same bytes in many calls are."""
    import dataclasses
    import json as _json

    from hangwatch.diagnose.views import ProcessView
    from hangwatch.evidence_io import evidence_from_dict

    ev = evidence_from_dict(
        _json.loads(
            (Path(__file__).resolve().parents[1] / "fixtures" / "evidence" / "lost_work_inferred.json").read_text()
        )
    )
    child = next(p for p in ev.processes if p.info.role.value == "child")

    def moved(calls: int) -> ProcessView:
        samples = tuple(
            dataclasses.replace(
                s, rchar=(s.rchar or 0) + (65536 if i else 0), syscalls=(s.syscalls or 0) + (calls if i else 0)
            )
            for i, s in enumerate(child.samples)
        )
        return ProcessView(dataclasses.replace(child, samples=samples), ev.clock_ticks)

    assert moved(1).work is None
    assert moved(40).work is not None and "moved 64 KiB" in moved(40).work


def _keepalive_samples(awake_at: set[int], n: int = 5, woke: int = 0) -> dict[int, list]:
    """Samples of the keep-alive child as a capture records them: idle at its sleep, or (at ``awake_at``) caught
    awake between two sleeps, on the loop's header; ``woke``: the context switches the last sample counted."""
    from hangwatch.records.evidence import Frame, ProcessSample, ThreadSample

    path = str(SCENARIOS / "child_keepalive.py")
    _, sleep_line = marker("child_keepalive.py", "HANG-HERE:child")
    out = []
    for i in range(n):
        awake = i in awake_at
        frame = Frame("keep_alive", path, sleep_line - 1 if awake else sleep_line)
        thread = ThreadSample(7, "MainThread", "R" if awake else "S", None, 0, awake, awake, (frame,))
        thread = dataclasses.replace(thread, ctx_switches=woke * i // (n - 1))
        out.append(ProcessSample(float(i), "S", 0.0, None, None, None, None, None, 1, (thread,), None))
    return {7: out}


@pytest.mark.parametrize(("awake_at", "woke"), [(set(), 0), ({2}, 0), ({0, 3}, 0), ({0, 1, 3, 4}, 4)])
def test_a_keepalive_loop_is_read_even_when_a_sample_caught_it_awake(awake_at, woke):
    """Deterministic twin of the e2e keep-alive test: on a busy machine a sample can catch the thread between
    two sleeps; the loop is still read (and still proven to have no way out). Caught idle once is enough where the
    kernel saw it wake between the samples at under 5 % of a core; with no wake seen, or with work, it is not (the
    first asserts)."""
    from hangwatch.capture.locals import sleeping_loops
    from hangwatch.diagnose.loops import never_exits

    assert sleeping_loops(_keepalive_samples({0, 1, 3, 4})) == {}
    busy = _keepalive_samples({0, 1, 3, 4}, woke=4)
    busy[7][-1] = dataclasses.replace(
        busy[7][-1], threads=(dataclasses.replace(busy[7][-1].threads[0], cpu_ticks=300),)
    )
    assert sleeping_loops(busy) == {}  # it woke, but worked: 3 s of CPU in 4 s is no nap
    reads = sleeping_loops(_keepalive_samples(awake_at, woke=woke))[7]
    assert len(reads) == 1 and reads[0].loop.strip().startswith("while True"), reads
    assert never_exits(reads[0].body) is not None


def test_a_sample_whose_stack_was_not_read_says_nothing_of_the_loop():
    """Under load py-spy can miss a thread's stack in one sample: that sample neither breaks the read nor counts
    towards it, as a read sample or as one caught idle (two read samples at least; idle in two of them, or once with
    naps)."""
    from hangwatch.capture.locals import sleeping_loops

    def unread(samples, at):
        s = samples[at]
        samples[at] = dataclasses.replace(s, threads=(dataclasses.replace(s.threads[0], frames=()),))
        return samples

    reads = sleeping_loops({7: unread(_keepalive_samples(set())[7], 2)})[7]
    assert len(reads) == 1 and reads[0].loop.strip().startswith("while True"), reads
    only_one = _keepalive_samples({0, 1, 3, 4}, woke=4)[7]
    assert sleeping_loops({7: unread(unread(unread(unread(only_one, 0), 1), 3), 4)}) == {}  # one read: no loop
    idle_unread = unread(_keepalive_samples({0, 1, 3})[7], 2)  # idle at 2 (unread) and 4, no naps: idle once read
    assert sleeping_loops({7: idle_unread}) == {}


def test_a_thread_idle_at_two_places_has_no_one_loop():
    from hangwatch.capture.locals import sleeping_loops

    samples = _keepalive_samples(set())
    moved = [
        s
        if i % 2
        else dataclasses.replace(
            s,
            threads=(dataclasses.replace(s.threads[0], frames=(dataclasses.replace(s.threads[0].frames[0], line=1),)),),
        )
        for i, s in enumerate(samples[7])
    ]
    assert sleeping_loops({7: moved}) == {}


# --- what a poll and an open wait on, read without stopping the thread ------------------------------------------
def test_an_epolls_files_are_read_from_its_fdinfo():
    """An event loop's epoll_wait names only its epoll's fd: the files it watches are the kernel's ``tfd:`` lines,
    each with whether it waits to read. Here a real epoll of this process, a socketpair's end to read and a pipe's
    write end to write."""
    import os
    import select
    import socket

    from hangwatch.capture.syscalls import _epoll_fds

    ep, (a, b), (r, w) = select.epoll(), socket.socketpair(), os.pipe()
    try:
        ep.register(a.fileno(), select.EPOLLIN)
        ep.register(w, select.EPOLLOUT)
        assert sorted(_epoll_fds(os.getpid(), ep.fileno()) or []) == sorted([(a.fileno(), True), (w, False)])
        assert _epoll_fds(os.getpid(), 10**6) is None  # no such fd
    finally:
        ep.close()
        a.close()
        b.close()
        os.close(r)
        os.close(w)


@pytest.mark.parametrize("relative", [False, True])
def test_the_path_a_thread_opens_a_fifo_at_is_read_while_it_waits(tmp_path, relative):
    """open() of a FIFO with nobody at the other side sleeps in the kernel (wait_for_partner): its path is read from
    the thread's registers and memory, and the thread is never stopped. Opening the other side ends the wait."""
    import os
    import threading
    import time

    from hangwatch.capture.proc import read_text
    from hangwatch.capture.syscalls import opening

    fifo = tmp_path / "control"
    os.mkfifo(fifo)
    tids: list[int] = []

    def reader() -> None:
        tids.append(threading.get_native_id())
        if relative:  # openat(dirfd, "control"): the path is the directory fd's, joined
            directory = os.open(tmp_path, os.O_RDONLY)
            try:
                os.close(os.open("control", os.O_RDONLY, dir_fd=directory))
            finally:
                os.close(directory)
            return
        with open(fifo) as f:
            f.read()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if tids and (read_text(Path(f"/proc/self/task/{tids[0]}/wchan")) or "") == "wait_for_partner":
                break
            time.sleep(0.02)
        got = opening(os.getpid(), tids[0])
        assert got is not None and got[0] == str(fifo) and got[1] & os.O_ACCMODE == os.O_RDONLY
        assert opening(os.getpid(), threading.get_native_id()) is None  # this thread is in no open()
    finally:
        with open(fifo, "w"):
            pass
        t.join(timeout=10)
    assert not t.is_alive()


def test_a_loops_test_names_are_its_own_frames_only_where_no_closure_global_or_nonlocal_reaches_them():
    """What another thread can change of a `while` loop's test: a name of the function that a nested function, a
    lambda or a class names, that `global`/`nonlocal` declares or `:=` assigns (in a generator another thread runs),
    a name the function does not bind (a free variable, a global), any name at a module's top level. The rest only
    the loop's own frame can rebind (capture/flags.py); and the loop must be in the function the frame runs."""
    from hangwatch.capture.flags import private_names

    source = (
        "import threading\n"
        "def train(n):\n"  # 2
        "    i, done, seen, got = 0, False, 0, 0\n"
        "    def stop():\n"
        "        nonlocal done\n"
        "        done = True\n"
        "    threading.Thread(target=lambda: print(seen)).start()\n"
        "    feed = ((got := x) for x in range(3))\n"
        "    while i < n and not done and seen < 3 and got < 1 and ready:\n"  # 9
        "        pass\n"
        "    def waiter():\n"  # 11
        "        while not done:\n"  # 12
        "            pass\n"
        "def poll():\n"  # 14
        "    global READY\n"
        "    k = 0\n"
        "    while not READY and k < 1:\n"  # 17
        "        pass\n"
        "while not STOP:\n"  # 19
        "    pass\n"
    )
    header = "while i < n and not done and seen < 3 and got < 1 and ready:"
    assert private_names(source, header, 9, "train") == ("i", "n")
    assert private_names(source, header, 9, "Trainer.other") is None  # not the frame's function
    assert private_names(source, "while not done:", 12, "train.<locals>.waiter") == ()  # a free variable
    assert private_names(source, "while not READY and k < 1:", 17, "poll") == ("k",)
    assert private_names(source, "while not STOP:", 19, "<module>") is None  # a module's top level: globals
    assert private_names(source, "for x in range(3):", 9, "train") is None  # only a `while` test is read


def test_a_spin_is_its_own_only_where_its_test_and_body_read_private_immutable_names():
    """`while i < n: pass` and a counter on private numbers are the frame's own; a body that copies shared state into
    a local (`pos = progress[0]`), a value that is a list, or a name not private are not."""
    from hangwatch.diagnose.loops import only_its_own
    from hangwatch.records.evidence import LocalsRead

    def read(body: str, values: dict[str, str], private: tuple[str, ...] | None = ("i", "n")) -> LocalsRead:
        return LocalsRead(0.0, 1, "f", "/x.py", 3, tuple(values.items()), body.splitlines()[0], body, 3, None, private)

    assert only_its_own(read("while i < n:\n    pass", {"i": "0", "n": "10"}))
    assert only_its_own(read("while i < n:\n    i += 0", {"i": "0", "n": "10"}))
    assert not only_its_own(read("while i < n:\n    i = progress[0]", {"i": "0", "n": "10", "progress": "[0]"}))
    assert not only_its_own(read("while i < n:\n    pass", {"i": "[0]", "n": "10"}))  # a list: changed in place
    assert not only_its_own(read("while i < n:\n    pass", {"i": "0", "n": "10"}, ("i",)))  # n: a closure's
    assert not only_its_own(read("while i < n:\n    pass", {"i": "0", "n": "10"}, None))  # its file not read
    assert not only_its_own(read("while i < n.size:\n    pass", {"i": "0", "n": "10"}))  # an attribute


def test_a_sigwaits_set_is_read_from_its_memory_bit_n_minus_1_for_signal_n():
    """A thread of this process waits in sigwait() for SIGUSR2 and SIGTERM (blocked in it alone): the set read from
    its memory has bits 11 and 14 and no other; the call has no timeout. Then SIGUSR2 ends the wait."""
    import signal
    import threading
    import time

    from hangwatch.capture.syscalls import read_blocked_call
    from hangwatch.diagnose.proof import signal_names

    waited = {signal.SIGUSR2, signal.SIGTERM}
    got: list[int] = []
    tid: list[int] = []

    def wait() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, waited)
        tid.append(threading.get_native_id())
        got.append(signal.sigwait(waited))

    t = threading.Thread(target=wait, daemon=True)
    t.start()
    call = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (call is None or call.name != "sigwait"):
        time.sleep(0.02)
        call = read_blocked_call(os.getpid(), tid[0]) if tid else None
    try:
        assert call is not None and call.name == "sigwait" and call.timeout is False, call
        assert call.signals == (1 << 11) | (1 << 14), call
        assert signal_names(call.signals) == "SIGUSR2, SIGTERM"
    finally:
        if tid:  # (SIGUSR2 is blocked in that thread from then on: sent earlier, it would end this process)
            signal.pthread_kill(t.ident or 0, signal.SIGUSR2)
        t.join(timeout=10)
    assert got == [signal.SIGUSR2]


@pytest.mark.parametrize(
    ("path", "read_as", "stdlib"),
    [
        (
            "/v/lib/python3.11/site-packages/multiprocess/pool.py",
            "/v/lib/python3.11/site-packages/multiprocessing/pool.py",
            True,
        ),
        (
            "/usr/lib/python3/dist-packages/multiprocess/queues.py",
            "/usr/lib/python3/dist-packages/multiprocessing/queues.py",
            True,
        ),
        ("/home/u/multiprocess/pool.py", "/home/u/multiprocess/pool.py", False),  # a user's own folder of that name
        ("/v/site-packages/torch/multiprocessing/spawn.py", "/v/site-packages/torch/multiprocessing/spawn.py", False),
        ("/usr/lib/python3.11/multiprocessing/pool.py", "/usr/lib/python3.11/multiprocessing/pool.py", True),
    ],
)
def test_multiprocess_is_read_as_multiprocessing_only_where_installed(path, read_as, stdlib):
    from hangwatch import signatures as sg

    assert sg.stdlib_path(path) == read_as
    assert sg.is_stdlib_file(path) is stdlib


def test_a_modules_numbers_are_read_where_a_counted_loop_names_them():
    """A loop's bound kept in a module's constant (`range(MAX_RETRIES)`, `if tries >= MAX_RETRIES`) is in no read of
    the loop's locals: the file says it (``flags.constants``), where it binds the name once, at its top level, to a
    number; one bound again (anywhere), to anything else, or a bool, is not said."""
    from hangwatch.capture.flags import constants

    source = (
        "import time\nMAX_RETRIES = 10\nDELAY: float = 0.5\nFLOOR = -3\nTWICE = 1\nTWICE = 2\nON = True\n"
        "LATER = 4\nNAME = 'x'\n\ndef f():\n    global LATER\n    LATER = 5\n"
    )
    names = frozenset({"MAX_RETRIES", "DELAY", "FLOOR", "TWICE", "ON", "LATER", "NAME", "time"})
    assert constants(source, names) == (("MAX_RETRIES", "10"), ("DELAY", "0.5"), ("FLOOR", "-3"))
    assert constants("def (:", names) == ()


def test_a_holders_place_is_the_users_line_not_hangwatchs_own_hook():
    """A lock's holder blocked in its DataLoader loop is said at the user's line: the autobeat hook's wrapper of
    ``__next__`` sits innermost in its stack, outside site-packages where hangwatch is installed editable (a first-sight
    DataLoader whose workers take the flock main holds said 'blocked at _attach_torch.<locals>.__next__')."""
    from hangwatch.diagnose.holding import wait_frame
    from hangwatch.records.evidence import Frame

    hook = "/work/src/hangwatch/_autobeat/_hangwatch_hook/libraries.py"
    frames = (
        Frame("_attach_torch.<locals>.__next__", hook, 54, "data = original(self)"),
        Frame("<module>", "/job/train.py", 27, "for step, batch in enumerate(loader):"),
    )
    assert wait_frame(frames) == frames[1]
    assert wait_frame(frames[:1]) == frames[0]  # (no line of the user's: the innermost)

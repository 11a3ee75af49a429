"""The deaths of a pool's workers in its initializer, read from the job's output (diagnose/lost.py): which make a
proof that every replacement will die the same way (the same error of the code itself, at the same line, the last
three times), which are named for the clock to decide (an error a file or memory may end) and which are nothing
(different errors). Tracebacks as Python 3.11 prints them (its caret lines included)."""

from __future__ import annotations

from hangwatch.diagnose.lost import _dies_initializing

LIB = "/usr/lib/python3.11/multiprocessing"


def death(n: int, error: str, helper: bool = True) -> str:
    """A fork pool worker's traceback, dying in its initializer ``init`` (through ``helper``, or raising itself)."""
    inner = (
        '  File "/job/prep.py", line 5, in init\n    helper(cfg)\n'
        '  File "/job/prep.py", line 3, in helper\n    return cfg.path\n           ^^^^^^^^\n'
        if helper
        else '  File "/job/prep.py", line 5, in init\n    open(cfg["path"])\n'
    )
    return (
        f"Process ForkPoolWorker-{n}:\nTraceback (most recent call last):\n"
        f'  File "{LIB}/process.py", line 314, in _bootstrap\n    self.run()\n'
        f'  File "{LIB}/process.py", line 108, in run\n    self._target(*self._args, **self._kwargs)\n'
        f'  File "{LIB}/pool.py", line 109, in worker\n    initializer(*initargs)\n'
        f"{inner}{error}\n"
    )


CODE = "AttributeError: 'dict' object has no attribute 'path'"


def test_the_same_error_of_the_code_three_times_names_the_initializer_and_the_line():
    dies = _dies_initializing("".join(death(n, CODE) for n in range(1, 5)))
    assert dies is not None and dies.initializer and dies.proves
    assert dies.during == "in the pool's initializer, init()"  # the initializer, not the helper it called
    assert dies.at.startswith("prep.py:3") and CODE in dies.why


def test_an_error_a_file_may_end_is_named_without_proof_and_twice_or_mixed_errors_are_nothing():
    missing = "FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-0.bin'"
    dies = _dies_initializing("".join(death(n, missing, helper=False) for n in range(1, 9)))
    assert dies is not None and not dies.proves and dies.at.startswith("prep.py:5")
    assert _dies_initializing("".join(death(n, CODE) for n in range(1, 3))) is None  # two: not yet three
    mixed = death(1, CODE) + death(2, CODE) + death(3, "NameError: name 'vocab' is not defined")
    assert _dies_initializing(mixed) is None
    # the newest deaths count: three of the code's error after an earlier, different one
    assert (
        _dies_initializing(
            death(1, missing, helper=False) + mixed.replace("NameError: name 'vocab' is not defined", CODE)
        )
        is not None
    )

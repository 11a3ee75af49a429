"""Progress counters learned from real trainers' log formats: each must yield its step, and none may
take a date, a time, a loss, a rate, a percentage or an epoch for the step."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hangwatch.supervise.progress.counters import OutputTail, ProgressParser

Line = Callable[[int, int], str]  # (step, record index) -> the record a trainer prints


def _t(i: int) -> str:
    return f"13:{i // 60:02d}:{i % 60:02d}"


# (name, line maker, first step printed, steps between records, whether the first record alone names the step)
FORMATS: list[tuple[str, Line, int, int, bool]] = [
    ("tqdm", lambda s, i: f"Epoch 1:  {s}%|████▌     | {s}/100 [00:{i:02d}<00:06,  8.{i}it/s]", 45, 1, True),
    ("hf-tqdm", lambda s, i: f" {s // 10}%|█▏        | {s}/1000 [00:{30 + i}<03:40,  4.0{i}it/s]", 120, 1, True),
    (
        "lightning-tqdm",
        lambda s, i: f"Epoch 0:  12%|█▏        | {s}/1000 [00:3{i}<03:40,  4.00it/s, v_num=0, train_loss=0.12{i}]",
        120,
        1,
        True,
    ),
    (
        "lightning-rich",
        lambda s, i: f"Epoch 0/9 ━━━━━━━━━━━━━━━━ {s}/800 0:00:1{i} • 0:01:04 5.0{i}it/s loss: 1.43{i}",
        62,
        1,
        True,
    ),
    (
        "lightning-rich-short",
        lambda s, i: f"Epoch 1/1  ━━━━━━━━━━━━━━━━━━━━ {s}/40 0:00:0{i} • 0:00:01 9.9{i}it/s loss: 1.2{i}",
        30,
        2,
        True,
    ),
    (
        "keras2",
        lambda s, i: f"{s}/1000 [==>...........................] - ETA: 1:2{i} - loss: 0.56{i} - accuracy: 0.8765",
        120,
        1,
        True,
    ),
    (
        "keras3",
        lambda s, i: f"{s}/1000 ━━━━━━━━━━━━━━━━━━━━ 3s 30ms/step - accuracy: 0.87{i} - loss: 0.56{i}",
        120,
        1,
        True,
    ),
    ("pytorch-mnist", lambda s, i: f"Train Epoch: 1 [{s}/60000 ({s * 100 // 60000}%)]\tLoss: 0.39{i}", 640, 640, True),
    (
        "word_language_model",
        lambda s, i: f"| epoch   1 |   {s}/ 2983 batches | lr 20.00 | ms/batch 12.3{i} | loss  7.5{i} | ppl  1979.59",
        200,
        200,
        True,
    ),
    ("nanogpt", lambda s, i: f"iter {s}: loss 2.345{i}, time 45.6{i}ms, mfu 12.34%", 120, 10, True),
    (
        "megatron",
        lambda s, i: (
            f" iteration      {s}/  500000 | consumed samples:        {s * 128} | elapsed time per "
            f"iteration (ms): 1234.{i} | learning rate: 1.000E-04 | global batch size:   128 | lm loss: 6.12345{i}E+00 | "
            "loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 | number of nan iterations:   0 |"
        ),
        120,
        10,
        True,
    ),
    (
        "timm",
        lambda s, i: (
            f"Train: 0 [ {s}/1251 ( 10%)]  Loss: 6.91{i} (6.91)  Time: 0.345s,  742.0{i}/s  "
            f"(0.345s,  742.03/s)  LR: 1.000e-05  Data: 0.012 (0.012)"
        ),
        120,
        50,
        True,
    ),
    (
        "fairseq",
        lambda s, i: (
            f"2026-11-22 {_t(i)} | INFO | train_inner | epoch 001:    {s} / 1000 loss=9.12{i}, "
            f"nll_loss=8.9, ppl=478.1, wps=1234{i}, ups=3.4, wpb=4096, bsz=32, num_updates={s}, lr=0.0001, gnorm=1.2, "
            f"train_wall=3{i}, wall={300 + i}"
        ),
        120,
        100,
        True,
    ),
    (
        "detectron2",
        lambda s, i: (
            f"[11/22 {_t(i)} d2.utils.events]:  eta: 1:23:4{i}  iter: {s}  total_loss: 1.23{i}  "
            f"loss_cls: 0.5  time: 0.456{i}  data_time: 0.0123  lr: 0.00012  max_mem: 2345M"
        ),
        119,
        20,
        True,
    ),
    (
        "mmengine",
        lambda s, i: (
            f"11/22 {_t(i)} - mmengine - INFO - Epoch(train)  [1][  {s}/1000]  lr: 1.0000e-02  "
            f"eta: 0:12:3{i}  time: 0.345{i}  data_time: 0.0123  memory: 1234  loss: 0.567{i}"
        ),
        50,
        50,
        True,
    ),
    (
        "torchtitan",
        lambda s, i: (
            f"[titan] 2026-11-22 {_t(i)},123 - root - INFO - step:  {s}  loss:  6.123{i}  memory: "
            f"12.34GiB(15.67%)  tps: 1,23{i}  tflops: 12.34  mfu: 5.67%"
        ),
        120,
        10,
        True,
    ),
    (
        "deepspeed",
        lambda s, i: (
            f"[2026-11-22 {_t(i)},123] [INFO] [logging.py:96:log_dist] [Rank 0] step={s}, "
            "skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]"
        ),
        120,
        10,
        True,
    ),
    ("absl", lambda s, i: f"I1122 {_t(i)}.123456 140000 train.py:123] [{s}] loss=2.3{i}", 120, 10, False),
    (
        "loguru",
        lambda s, i: f"2026-11-22 {_t(i)}.123 | INFO     | __main__:train:42 - step {s} loss 0.12{i}",
        120,
        1,
        True,
    ),
    ("plain-it", lambda s, i: f"it {s} | lr 3e-4 | loss 0.1{i}", 120, 1, True),
    ("progress-of", lambda s, i: f"progress: {s / 100:.1f}% ({s} of 10000)", 120, 10, True),
    ("thousands", lambda s, i: f"Batch {s:,}/41,163 loss {0.5 + i / 100:.3f}", 4886, 1, True),
    ("step-slash", lambda s, i: f"Step {s}/10000 | loss 2.34{i} | lr 3.0e-04", 120, 1, True),
    ("global_step", lambda s, i: f"global_step={s} loss=0.5{i}", 120, 1, True),
    ("accelerate", lambda s, i: f"epoch 0 step {s}: train loss 0.4{i} elapsed {i * 2}s", 120, 1, True),
    ("unnamed-counter", lambda s, i: f"[{_t(i)}] {s} loss 0.4{i} acc 0.9{i}", 500, 7, False),
]


def _feed(parser: ProgressParser, tail: OutputTail, text: str, at: float) -> int | None:
    tail.add(text.encode(), at)
    c = parser.latest(tail.snapshot()[2])
    return None if c is None else c.step


@pytest.mark.parametrize(("name", "line", "first", "every", "prior"), FORMATS, ids=[f[0] for f in FORMATS])
def test_each_format_yields_its_step(name, line, first, every, prior):
    parser, tail = ProgressParser(), OutputTail()
    step0 = _feed(parser, tail, line(first, 0) + "\n", 1.0)
    if prior:
        assert step0 == first, f"{name}: first record read as {step0}"
    steps = []
    for i in range(1, 5):
        steps.append(_feed(parser, tail, line(first + i * every, i) + "\n", 1.0 + i))
    assert steps == [first + i * every for i in range(1, 5)], f"{name}: read {steps}"


@pytest.mark.parametrize(("name", "line", "first", "every", "prior"), FORMATS, ids=[f[0] for f in FORMATS])
def test_a_redraw_of_the_same_step_is_not_progress(name, line, first, every, prior):
    parser, tail = ProgressParser(), OutputTail()
    for i in range(3):
        _feed(parser, tail, line(first + i * every, i) + "\n", 1.0 + i)
    tail.add(("\r" + line(first + 2 * every, 2)).encode(), 9.0)
    assert parser.latest(tail.snapshot()[2]) is None


def test_hf_trainer_log_dict_with_quoted_values_is_progress():
    parser, tail = ProgressParser(), OutputTail()
    seen = []
    for i, epoch in enumerate(("0.04", "0.08")):
        tail.add(
            f"{{'loss': '6.0{i}', 'grad_norm': '0.79{i}', 'learning_rate': '3.4e-05', 'epoch': '{epoch}'}}\n".encode(),
            1.0 + i,
        )
        seen.append(parser.latest(tail.snapshot()[2]))
    assert all(c is not None for c in seen), seen


def test_an_epoch_that_stands_still_while_the_batch_advances_is_not_the_step():
    parser, tail = ProgressParser(), OutputTail()
    steps = [_feed(parser, tail, f"Epoch 3 | batch {b} | loss 0.{b}\n", float(b)) for b in range(1, 6)]
    assert steps[-1] == 5


def test_a_monitor_line_with_a_clock_is_no_counter():
    parser, tail = ProgressParser(), OutputTail()
    for i in range(5):
        tail.add(f"2026-11-22 13:00:{i:02d} GPU util 0% mem 1234MiB\n".encode(), float(i))
        c = parser.latest(tail.snapshot()[2])
        assert c is None or c.step is None, c


def test_a_pools_worker_names_counting_up_in_tracebacks_are_no_counter():
    """A multiprocessing.Pool whose initializer raises starts worker after worker, each printing its traceback under
    ``Process ForkPoolWorker-N:``: N counted up like a step (the job was 'progressing' for good). A number glued to
    a name by a hyphen is part of the name, unless the name is a step's (``step-1200``)."""
    parser, tail = ProgressParser(), OutputTail()
    trace = 'Traceback (most recent call last):\n  File "/w/train.py", line 30, in init_worker\nFileNotFoundError: x\n'
    for n in range(3, 40):
        tail.add(f"Process ForkPoolWorker-{n}:\n{trace}".encode(), float(n))
        c = parser.latest(tail.snapshot()[2])
        assert c is None or c.step is None, c
    for s in range(3):  # a counter beside such a name is still read, and a step's own name glued to its number
        tail.add(f"ckpt-7 step {100 + s} loss 0.5\n".encode(), 50.0 + s)
    assert parser.latest(tail.snapshot()[2]).step == 102
    for s in range(3):
        tail.add(f"step-{1200 + s} loss 0.5\n".encode(), 60.0 + s)
    assert parser.latest(tail.snapshot()[2]).step == 1202


def test_the_rank_prefix_keeps_each_rank_its_own_counter():
    parser, tail = ProgressParser(), OutputTail()
    for s in range(3):
        tail.add(f"[default0]:step {10 + s} loss 0.5\n[default1]:step {20 + s} loss 0.5\n".encode(), float(s))
        by_rank = parser.by_rank(tail.snapshot()[2])
    assert {r: c.step for r, c in by_rank.items()} == {0: 12, 1: 22}

"""What attempt N runs: the command with the user's fallbacks and --resume-arg applied (the newest
checkpoint filled in), and the environment with autobeat's and the remedies' settings."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING

from hangwatch.records.run import EventKind, OnHang
from hangwatch.records.values import frozen
from hangwatch.recover.fallback import apply_fallback, command_for_attempt, parse_fallback
from hangwatch.supervise.context import RunContext
from hangwatch.supervise.job.autobeat import HEAL_ENV, HEAL_SKIP_ENV, autobeat_env

if TYPE_CHECKING:
    from hangwatch.supervise.progress.checkpoints import Checkpoint

PLACEHOLDERS = ("{checkpoint}", "{checkpoint_step}")


@frozen
class LaunchPlan:
    """Attempt N's command and environment, and the checkpoint it was handed (if any)."""

    argv: list[str]
    env: dict[str, str]
    checkpoint: Checkpoint | None  # the newest checkpoint when it was planned
    given: bool  # the checkpoint was passed on ({checkpoint} in --resume-arg or a fallback)


def plan_attempt(ctx: RunContext, n: int, base_env: dict[str, str]) -> LaunchPlan:
    """Attempt ``n``'s plan; the resume and the remedies it applies are written down and said."""
    cfg = ctx.cfg
    ckpt = ctx.checkpoints[-1] if ctx.checkpoints else None
    argv = command_for_attempt(cfg.argv, [fill_args(f.args, ckpt) for f in cfg.fallbacks], n)
    env = dict(base_env)
    used = cfg.fallbacks[: max(0, n - 1)]
    given = ckpt is not None and any(uses_checkpoint(f.args) or any(map(uses_checkpoint, f.env.values())) for f in used)
    for fb in used:
        env.update({k: v for k, v in ((k, fill(v, ckpt)) for k, v in fb.env.items()) if v is not None})
    if n > 1 and cfg.resume_arg:
        given = given or (ckpt is not None and uses_checkpoint(cfg.resume_arg))
        resume = fill_args(cfg.resume_arg, ckpt)
        argv = apply_fallback(argv, resume) if resume else argv
        ctx.rundir.event(
            EventKind.RESUME, attempt=n, applied=resume or None, checkpoint=ckpt.to_dict() if ckpt else None
        )
        ctx.say(
            f"hangwatch: attempt {n} resumes from {ckpt.path} (step {ckpt.step})"
            if ckpt and resume
            else f"hangwatch: attempt {n}: no checkpoint was seen, so --resume-arg is left out"
        )
    env.update(
        {
            "PYTHONUNBUFFERED": "1",
            "HANGWATCH_RUN_DIR": str(cfg.run_dir.resolve()),
            "HANGWATCH_ATTEMPT": str(n),
            "HANGWATCH_HEARTBEAT_DIR": str(ctx.rundir.heartbeat_dir.resolve()),
        }
    )
    env.update(autobeat_env(env, cfg.autobeat, cfg.max_slow, cfg.flight_recorder))
    env.update(ctx.remedies.env())
    if cfg.on_hang == OnHang.HEAL:  # the workers the job may still replace in place, this run's heals taken off
        env[HEAL_ENV] = str(max(0, cfg.max_heals - ctx.ledger.heals))
        known: dict[str, list[int]] = {}  # the samples earlier attempts left out stay out
        for d in ctx.rundir.layout.skipped_dicts():
            if isinstance(d.get("dataset_key"), str) and isinstance(d.get("index"), int):
                known.setdefault(d["dataset_key"], []).append(d["index"])
        if known:
            env[HEAL_SKIP_ENV] = json.dumps(known)
    for r in ctx.remedies.applied:
        if r.attempt == n:
            ctx.rundir.event(EventKind.REMEDY, attempt=n, remedy=r.remedy, applied=r.text, cause=r.cause)
            ctx.say(f"hangwatch: attempt {n} applies {r.text} (remedy for {r.cause})")
    return LaunchPlan(argv, env, ckpt, given)


def uses_checkpoint(text: str) -> bool:
    """Whether a fallback or --resume-arg names the checkpoint."""
    return any(p in text for p in PLACEHOLDERS)


def fill(text: str, ckpt: Checkpoint | None) -> str | None:
    """``text`` with the placeholders replaced; None when it has one and no checkpoint (or step) is known."""
    if not uses_checkpoint(text):
        return text
    if ckpt is None or ("{checkpoint_step}" in text and ckpt.step is None):
        return None
    return text.replace("{checkpoint}", ckpt.path).replace("{checkpoint_step}", str(ckpt.step))


def fill_args(text: str, ckpt: Checkpoint | None) -> str:
    """A fallback's options with the placeholders replaced; an option whose value names a checkpoint that
    is not known is left out (the rest of the fallback still applies)."""
    kept = []
    for name, value, eq in parse_fallback(text):
        filled = fill(value, ckpt) if value is not None else None
        if value is not None and filled is None:
            continue
        if filled is None:
            kept.append(shlex.quote(name))
        elif eq:
            kept.append(shlex.quote(f"{name}={filled}"))
        else:
            kept += [shlex.quote(name), shlex.quote(filled)]
    return " ".join(kept)

"""`hangwatch report RUN_DIR --html FILE`: one self-contained page (inline SVG and CSS, no script, no
network) with the run's progress timeline, step rate per attempt, cost, incidents, process trees and
merged rank stacks. Everything shown in colour is also written in words."""

from __future__ import annotations

import time
from html import escape
from pathlib import Path

from hangwatch.records.incident import Finding, Incident, ProcessRecord
from hangwatch.records.run import Event, EventKind, RunSummary
from hangwatch.records.values import frozen
from hangwatch.report.banner import deadline_text
from hangwatch.report.gpu_text import gpu_lines
from hangwatch.report.ranks import RankGroup, display_rows, leaves, merged_lines, rank_stacks
from hangwatch.report.run_report import TIMELINE_EVENTS, RunRecord
from hangwatch.report.units import duration, usd

MAX_POINTS = 600  # per attempt in the timeline: a day of progress events downsampled to this
MAX_EVENTS = 400  # rows of the event table (the newest kept)
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 900, 320, 70, 20, 20, 40
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
DASHES = ("", "6 3", "2 3", "8 3 2 3")  # attempts differ by dash as well as by colour

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1000px;
color:#1b1b1b;padding:0 12px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f4f4f4}code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
pre{background:#f7f7f7;padding:8px;overflow-x:auto}.state{font-weight:bold}.bad{color:#b00020}
.good{color:#146c2e}.muted{color:#666}svg text{font:11px system-ui,sans-serif}
.incident{border-left:4px solid #b00020;padding-left:12px;margin:16px 0}
.chain{display:flex;flex-wrap:wrap;align-items:center;gap:4px;margin:8px 0}
.node{border:1px solid #999;border-radius:6px;padding:4px 8px;background:#fafafa;max-width:260px}
.node .st{font-weight:bold}.node.out{border-style:dashed}.node.end{border-color:#b00020;border-width:2px}
.hop{color:#555;font-size:12px;text-align:center;max-width:140px}
"""


@frozen
class Stall:
    """A shaded span of the timeline: from the last progress to the end of the incident."""

    start: float
    end: float
    number: int
    cause: str


def _e(x: object) -> str:
    return escape(str(x), quote=True)


def _clock(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def downsample(points: list[tuple[float, int]], limit: int = MAX_POINTS) -> list[tuple[float, int]]:
    """At most ``limit`` points: per time bucket the first, lowest, highest and last (a drop or a stall
    inside a bucket still shows)."""
    if len(points) <= limit:
        return points
    buckets = max(1, limit // 4)
    t0, t1 = points[0][0], points[-1][0]
    span = (t1 - t0) or 1.0
    groups: dict[int, list[tuple[float, int]]] = {}
    for p in points:
        groups.setdefault(min(buckets - 1, int((p[0] - t0) / span * buckets)), []).append(p)
    out: list[tuple[float, int]] = []
    for b in sorted(groups):
        g = groups[b]
        keep = {g[0], min(g, key=lambda p: p[1]), max(g, key=lambda p: p[1]), g[-1]}
        out.extend(sorted(keep))
    return out


def progress_series(run: RunRecord) -> dict[int, list[tuple[float, int]]]:
    """(time, step) per attempt: progress events, plus each attempt's first and last step."""
    series: dict[int, list[tuple[float, int]]] = {}
    for e in run.events:
        step, attempt = e.fields.get("step"), e.fields.get("attempt")
        if e.kind in (EventKind.PROGRESS, EventKind.RECOVERED) and isinstance(step, int) and isinstance(attempt, int):
            series.setdefault(attempt, []).append((e.at, step))
    for inc in run.incidents:  # the last progress before each stall
        lp = inc.last_progress
        if lp is not None and lp.step is not None:
            series.setdefault(inc.attempt, []).append((lp.at, lp.step))
    s = run.summary
    for a in s.attempt_stats if s is not None else ():
        n, end, last = a.get("attempt"), a.get("ended_at") or (s.updated_at if s else None), a.get("last_step")
        if isinstance(n, int) and isinstance(last, int) and isinstance(end, float | int):
            series.setdefault(n, []).append((float(end), last))
    return {n: downsample(sorted(set(pts))) for n, pts in sorted(series.items())}


def stalls(run: RunRecord) -> list[Stall]:
    """Each incident's stall: from its last progress to the next event that ended it."""
    out = []
    enders = (
        EventKind.RECOVERED,
        EventKind.ACTION,
        EventKind.JOB_EXIT,
        EventKind.LAUNCH,
        EventKind.EXIT,
        EventKind.TERMINATE,
    )
    by_number = dict(run.numbered())
    for ev in (e for e in run.events if e.kind == EventKind.INCIDENT):
        name = Path(str(ev.fields.get("path") or "")).name  # the event names its incident's directory
        inc = by_number.get(int(name)) if name.isdigit() else None
        if inc is None:
            continue
        n = int(name)
        start = inc.last_progress.at if inc.last_progress is not None else ev.at
        end = next((e.at for e in run.events if e.at >= ev.at and e.kind in enders), ev.at)
        root = inc.root_cause
        out.append(Stall(min(start, ev.at), max(end, ev.at), n, root.cause if root else inc.verdict.value))
    return out


def _launches(events: list[Event]) -> list[tuple[float, int]]:
    return [
        (e.at, int(e.fields["attempt"]))
        for e in events
        if e.kind == EventKind.LAUNCH and isinstance(e.fields.get("attempt"), int)
    ]


def timeline_svg(run: RunRecord) -> str:
    """Step against time for every attempt; restarts marked; stalls shaded and linked to their incident."""
    series = progress_series(run)
    spans = stalls(run)
    launches = _launches(run.events)
    times = [t for pts in series.values() for t, _ in pts] + [t for t, _ in launches]
    times += [x for s in spans for x in (s.start, s.end)]
    steps = [v for pts in series.values() for _, v in pts]
    if not times:
        return '<p class="muted">No progress was recorded (no counter or heartbeat).</p>'
    t0, t1 = min(times), max(times)
    t1 = t1 if t1 > t0 else t0 + 1
    top = max(steps) if steps else 1
    top = top if top > 0 else 1
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def x(t: float) -> float:
        return PAD_L + (t - t0) / (t1 - t0) * pw

    def y(v: float) -> float:
        return PAD_T + ph - v / top * ph

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="100%" role="img" '
        f'aria-labelledby="tl-title"><title id="tl-title">Step against time, {len(series)} attempt(s), '
        f"{len(spans)} stall(s)</title>",
        f'<rect x="{PAD_L}" y="{PAD_T}" width="{pw}" height="{ph}" fill="none" stroke="#bbb"/>',
    ]
    for s in spans:
        parts.append(
            f'<a href="#incident-{s.number}"><rect x="{x(s.start):.1f}" y="{PAD_T}" '
            f'width="{max(2.0, x(s.end) - x(s.start)):.1f}" height="{ph}" fill="#b00020" fill-opacity="0.15" '
            f'stroke="#b00020" stroke-dasharray="3 2"><title>stall {s.number}: {_e(s.cause)}, '
            f"{duration(s.end - s.start)} (click for incident {s.number})</title></rect>"
            f'<text x="{x(s.start) + 3:.1f}" y="{PAD_T + 12}" fill="#b00020">stall {s.number}</text></a>'
        )
    for t, n in launches:
        if n > 1:
            parts.append(
                f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{PAD_T}" y2="{PAD_T + ph}" stroke="#555" '
                f'stroke-dasharray="4 4"/><text x="{x(t) + 3:.1f}" y="{PAD_T + ph - 6}">restart '
                f"(attempt {n})</text>"
            )
    for i, (n, pts) in enumerate(series.items()):
        color, dash = COLORS[i % len(COLORS)], DASHES[i % len(DASHES)]
        path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts)
        parts.append(
            f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2" '
            f'stroke-dasharray="{dash}"><title>attempt {n}</title></polyline>'
        )
        if pts:
            lt, lv = pts[-1]
            parts.append(
                f'<text x="{min(x(lt) + 4, W - 60):.1f}" y="{max(y(lv) - 4, PAD_T + 10):.1f}" '
                f'fill="{color}">attempt {n}</text>'
            )
    for frac in (0, 0.5, 1):
        v = top * frac
        parts.append(f'<text x="{PAD_L - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:,.0f}</text>')
    parts.append(
        f'<text x="{PAD_L}" y="{H - 12}">{_e(_clock(t0))}</text>'
        f'<text x="{W - PAD_R}" y="{H - 12}" text-anchor="end">{_e(_clock(t1))} '
        f'(+{_e(duration(t1 - t0))})</text><text x="14" y="{PAD_T + ph / 2}" '
        f'transform="rotate(-90 14 {PAD_T + ph / 2})" text-anchor="middle">step</text></svg>'
    )
    return "".join(parts)


def rate_rows(s: RunSummary) -> list[str]:
    """The step rate of each attempt, and what each fallback cost against attempt 1: its rate, and the
    time and money its slower steps add over the steps it had left to run."""
    stats = [a for a in s.attempt_stats if isinstance(a.get("attempt"), int)]
    if not stats:
        return []
    base = stats[0].get("steps_per_s")
    top = max((a.get("steps_per_s") or 0.0) for a in stats) or 1.0
    rows = []
    for a in stats:
        rate = a.get("steps_per_s")
        applied = a.get("applied") or "(the command as given)"
        bar = (
            (
                f'<svg width="160" height="12" role="img" aria-label="{rate:.3g} steps/s"><rect width="'
                f'{160 * rate / top:.0f}" height="12" fill="#1f77b4"/></svg>'
            )
            if rate
            else ""
        )
        vs = "-"
        if rate and base and a is not stats[0]:
            vs = f"{rate / base:.2f}x the rate of attempt 1"
            # What the fallback costs over the steps it had left to run when it started.
            first = a.get("first_step")
            remaining = s.total_steps - first + 1 if s.total_steps and isinstance(first, int) else None
            if remaining is not None and remaining > 0:
                extra = remaining / rate - remaining / base
                vs += f", ETA {'+' if extra >= 0 else '-'}{duration(abs(extra))}"
                if s.cost_per_hour is not None:
                    vs += f", {'+' if extra >= 0 else '-'}{usd(abs(extra) / 3600 * s.cost_per_hour)}"
        span = "-"
        if a.get("started_at"):
            end = a.get("ended_at") or s.updated_at or a["started_at"]
            span = duration(float(end) - float(a["started_at"]))
        steps = f"{a.get('first_step', '-')} → {a.get('last_step', '-')}" if a.get("last_step") is not None else "-"
        rows.append(
            f"<tr><td>{a['attempt']}</td><td><code>{_e(applied)}</code></td><td>{_e(span)}</td>"
            f"<td>{_e(steps)}</td><td>{'-' if not rate else f'{rate:.3g} steps/s'} {bar}</td>"
            f"<td>{_e(vs)}</td><td>{_e(a.get('exit_code', '-'))}</td></tr>"
        )
    return rows


def _tree(processes: tuple[ProcessRecord, ...], keep: frozenset[int] = frozenset()) -> str:
    """The process tree as nested lists, each line in words (role, rank, state, CPU, where); many
    sibling ranks in the same place are one line (report/ranks.py)."""
    out: list[str] = []
    depth_now = -1
    for depth, p in display_rows(processes, keep=keep):
        if depth > depth_now:
            out.append("<ul>" * (depth - depth_now))
        else:
            out.append("</li>" + "</ul></li>" * (depth_now - depth))
        depth_now = depth
        if isinstance(p, RankGroup):
            out.append(f"<li><b>{_e(p.text())}</b>")
            continue
        rank = f" rank {p.rank}" if p.rank is not None else ""
        cpu = "?" if p.cpu_percent is None else f"{p.cpu_percent:.0f}%"
        out.append(
            f"<li><b>{_e(p.role)}</b>{_e(rank)} pid {p.pid}, {_e(p.state)}, {cpu} CPU, "
            f"<code>{_e(p.where_text())}</code>" + (f"; {_e(p.holds)}" if p.holds else "")
        )
    if depth_now >= 0:
        out.append("</li>" + "</ul></li>" * depth_now + "</ul>")
    return "".join(out) or "<ul></ul>"


def _ranks_html(incident: Incident) -> str:
    stacks = rank_stacks(incident.processes)
    if len(stacks) < 2:
        return ""
    lines = "\n".join(
        f"{'  ' * depth}{('[' + label + '] ') if label else ''}{text}" for depth, label, text in merged_lines(stacks)
    )
    return (
        f"<h4>Ranks ({len(stacks)}): where each one is</h4><p><code>{_e(leaves(stacks))}</code></p>"
        f"<details><summary>Merged stacks (frames shared by all ranks shown once)</summary>"
        f"<pre>{_e(lines)}</pre></details>"
    )


def chain_html(inc: Incident) -> str:
    """The wait chain behind the root cause, drawn: each process a box (its state), each wait an arrow (what
    it waits on), the chain's end outlined, and what that end makes the wait."""
    chain = inc.root_chain_record()
    if chain is None or not chain.get("hops"):
        return ""
    nodes = {n.get("id"): n for n in (inc.graph or {}).get("nodes", ())}

    def box(node_id: str, end: bool) -> str:
        n = nodes.get(node_id, {"label": node_id, "state": "?", "fact": "", "in_job": True})
        cls = "node" + (" end" if end else "") + ("" if n.get("in_job", True) else " out")
        return (
            f'<div class="{cls}" title="{_e(n.get("fact", ""))}"><div>{_e(n.get("label", node_id))}</div>'
            f'<div class="st">{_e(n.get("state", "?"))}</div></div>'
        )

    hops = chain["hops"]
    parts = [box(hops[0]["waiter"], False)]
    for i, h in enumerate(hops):
        timeout = " (no timeout)" if h.get("timeout") is False else ""
        parts.append(f'<div class="hop">{_e(h.get("resource", ""))}{_e(timeout)}<br>&#8594;</div>')
        parts.append(box(h["holder"], i == len(hops) - 1))
    words = chain.get("words") or []
    ending = f"<p>{_e(words[-1].lstrip('= >'))}</p>" if words else ""
    return f'<h4>Wait chain</h4><div class="chain">{"".join(parts)}</div>{ending}'


def _root_html(inc: Incident, root: Finding) -> str:
    """The root cause: what, where (with its line of code), its proof, the chain, the evidence and the fix."""
    out = [f"<p>{_e(root.summary)}</p>"]
    w = root.where
    if w is not None and w.file:
        out.append(
            f"<p>At <code>{_e(w.location())}</code> in <code>{_e(w.function or '?')}</code> ({_e(w.owner())})</p>"
        )
        if w.code:
            out.append(f"<pre>{w.line} | {_e(w.code)}</pre>")
    if root.proof is not None:
        out.append(f"<p><b>Proof of {_e(root.proof.kind.value)}:</b> {_e(root.proof.fact)}</p>")
    out.append(chain_html(inc))
    if root.evidence:
        out.append("<p><b>Evidence</b></p><ul>" + "".join(f"<li>{_e(e)}</li>" for e in root.evidence) + "</ul>")
    if root.fix:
        out.append("<p><b>Fix</b></p><ol>" + "".join(f"<li>{_e(f)}</li>" for f in root.fix) + "</ol>")
    return "".join(out)


def _incident_html(n: int, inc: Incident) -> str:
    root = inc.root_cause
    out = [
        f'<div class="incident" id="incident-{n}"><h3>Incident {n}: <span class="bad">'
        f"{_e(inc.verdict.value.upper())}</span> {_e(root.cause if root else '')}</h3>",
        f"<p>Detected {_e(_clock(inc.detected_at))}, attempt {inc.attempt}, action <b>{_e(inc.action.value)}</b>",
    ]
    if inc.last_progress is not None:
        lp = inc.last_progress
        what = f"step {lp.step}, {lp.source}" if lp.step is not None else lp.source
        out.append(f"; last progress {_e(_clock(lp.at))} ({_e(what)})")
    out.append(".</p>")
    if root is not None:
        out.append(_root_html(inc, root))
    for f in inc.findings[1:]:
        out.append(f"<p class='muted'>Also: <code>{_e(f.cause)}</code> {_e(f.summary)}</p>")
    if inc.remedy:
        out.append(f"<p>The next attempt applied: <code>{_e(inc.remedy)}</code></p>")
    out.append(_ranks_html(inc))
    if inc.collectives:
        rows = "".join(
            f"<tr><td>{_e(c.ranks)}</td><td>{_e(c.group)}</td><td><code>{_e(c.last_entered)}</code></td>"
            f"<td>{_e(c.last_completed)}</td><td>{_e(c.state)}</td></tr>"
            for c in inc.collectives
        )
        out.append(
            "<h4>Collectives (torch's flight recorder)</h4><table><tr><th>ranks</th><th>group</th>"
            f"<th>last entered</th><th>last completed</th><th>state</th></tr>{rows}</table>"
        )
    section = gpu_lines(inc)
    if section:
        out.append(f"<h4>GPUs and kernel log</h4><pre>{_e(chr(10).join(section))}</pre>")
    if inc.processes:
        out.append(
            f"<details><summary>Process tree ({len(inc.processes)} processes)</summary>"
            f"{_tree(inc.processes, inc.finding_pids())}</details>"
        )
    out.append("</div>")
    return "".join(out)


def _deadline_rows(s: RunSummary) -> list[tuple[str, str]]:
    """The deadline's row, where one was given."""
    if s.deadline is None:
        return []
    return [("Deadline", _e(_clock(s.deadline) + (f": {deadline_text(s)}" if deadline_text(s) else "")))]


def _recovery_rows(s: RunSummary) -> list[tuple[str, str]]:
    """What recovery did and has to resume from: steps redone after restarts, heals, the newest checkpoint."""
    rows = []
    if s.redone_steps:
        cost = f", {usd(s.redone_seconds / 3600 * s.cost_per_hour)}" if s.cost_per_hour else ""
        rows.append(("Redone after restarts", _e(f"{s.redone_steps} steps, {duration(s.redone_seconds)}{cost}")))
    if s.heals:
        rows.append(("Healed in place", _e(f"{s.heals} DataLoader worker(s); {s.skipped_samples} sample(s) skipped")))
    if s.checkpoint:
        ck = s.checkpoint
        rows.append(("Newest checkpoint", _e(f"{ck['path']} (step {ck.get('step')}, {ck.get('source')})")))
    return rows


def _summary_html(s: RunSummary | None) -> str:
    if s is None:
        return "<p>No summary.json yet.</p>"
    rows = [
        ("Command", f"<code>{_e(' '.join(s.command))}</code>"),
        (
            "State",
            f'<span class="state">{_e(s.state.value)}</span>'
            + (f", exit code {s.exit_code}" if s.exit_code is not None else ""),
        ),
        ("Started", _e(_clock(s.started_at))),
        ("Wall time", _e(duration(s.wall_seconds))),
        ("Attempts", str(s.attempts)),
        (
            "Last step",
            "-" if s.last_step is None else f"{s.last_step}" + (f" of {s.total_steps}" if s.total_steps else ""),
        ),
        ("Step rate", "-" if s.steps_per_s is None else f"{s.steps_per_s:.3g} steps/s"),
        ("ETA", _e(duration(s.eta_seconds)) if s.ended_at is None else "-"),
        *_deadline_rows(s),
        ("Incidents", str(s.incidents)),
        ("Stalled", _e(duration(s.stalled_seconds))),
        *_recovery_rows(s),
        ("Goodput", "unknown (no counter or heartbeat)" if s.goodput is None else f"{s.goodput * 100:.1f}%"),
        ("Progress signal", _e(s.progress_signal)),
    ]
    if s.cost_usd is not None:
        cost = (
            f"{usd(s.cost_usd)} at {usd(s.cost_per_hour or 0)}/h; wasted while stalled or redoing steps after a "
            f"restart: {usd(s.wasted_usd or 0)}"
        )
        if s.projected_cost_usd is not None and s.ended_at is None:
            cost += f"; {usd(s.projected_cost_usd)} more to finish"
        if s.budget_usd is not None:
            cost += f"; budget {usd(s.budget_usd)}"
        rows.append(("Cost", _e(cost)))
    return "<table>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


AND_SHOWN = (EventKind.REMEDY, EventKind.OVER_BUDGET, EventKind.HANDOVER)  # beside the timeline's events


def _events_html(events: list[Event]) -> str:
    shown = [e for e in events if e.kind in TIMELINE_EVENTS or e.kind in AND_SHOWN]
    cut = len(shown) - MAX_EVENTS
    rows = []
    for e in shown[-MAX_EVENTS:]:
        detail = ", ".join(f"{k}={v}" for k, v in e.fields.items() if k != "command" and v not in (None, [], ""))
        rows.append(f"<tr><td>{_e(_clock(e.at))}</td><td>{_e(e.kind)}</td><td>{_e(detail[:300])}</td></tr>")
    head = f"<p class='muted'>{cut} earlier events left out.</p>" if cut > 0 else ""
    return head + "<table><tr><th>Time</th><th>Event</th><th>Details</th></tr>" + "".join(rows) + "</table>"


def render_html(run: RunRecord, run_dir: Path) -> str:
    """The whole page."""
    s = run.summary
    title = f"hangwatch: {run_dir.name}"
    rate = rate_rows(s) if s is not None else []
    body = [
        f"<h1>{_e(title)}</h1>",
        _summary_html(s),
        "<h2>Progress</h2><p class='muted'>Step against time. Each attempt is its own line (colour and dash); "
        "shaded spans are stalls (click one for its incident); dashed verticals are restarts.</p>",
        timeline_svg(run),
    ]
    if rate:
        body += [
            "<h2>Step rate per attempt</h2><table><tr><th>Attempt</th><th>Ran with</th><th>Time</th>"
            "<th>Steps</th><th>Rate</th><th>Against attempt 1</th><th>Exit</th></tr>",
            *rate,
            "</table>",
        ]
    body.append(f"<h2>Incidents ({len(run.incidents)})</h2>")
    body += [f"<p class='muted'>{escape(p)}: damaged (it does not parse), left out</p>" for p in run.damaged]
    body += [_incident_html(n, inc) for n, inc in run.numbered()] or ["<p>None.</p>"]
    body += [
        "<h2>Events</h2>",
        _events_html(run.events),
        f"<p class='muted'>Written by hangwatch {_e(_clock(time.time()))} from {_e(run_dir)}.</p>",
    ]
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        f'content="width=device-width,initial-scale=1"><title>{_e(title)}</title><style>{CSS}</style></head>'
        f"<body>{''.join(body)}</body></html>\n"
    )

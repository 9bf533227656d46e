"""What the board, the escalation and the report say. Pure, no I/O."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bot.records import neutralise
from handlers.debug.board import Board, Entry, Hypothesis, escalation_due, few_all_failed
from handlers.debug.confidence import Confidence, confidence, counts
from handlers.debug.grounding import Ground
from handlers.debug.related import Related

LOG_SHOWN: Final = 40
ROWS_SHOWN: Final = 30
COLUMNS: Final = 10


@dataclass(frozen=True)
class FixAttempt:
    """A bugfix pull request of this bug: which confirmed hypothesis it fixes, and whether the fix is
    verified (its ``steward/regression-first`` status is success)."""

    number: int
    url: str
    hypothesis: int | None
    state: str

    @property
    def verified(self) -> bool:
        return self.state == "success"

    def to_json(self) -> dict[str, Any]:
        return {"pr": self.number, "url": self.url, "hypothesis": self.hypothesis, "status": self.state}


def cell(text: str, limit: int = 500) -> str:
    """People's text as one inert table cell (bot.records.neutralise: no mention, closing keyword, HTML or
    image)."""
    return neutralise.cell(text, limit)


def _link(text: str, url: str) -> str:
    return f"[{text}]({url})" if url else text


def _code(refs: Sequence[str], limit: int = 4) -> str:
    shown = ", ".join(f"`{cell(r)}`" for r in refs[:limit])
    return shown + (f" +{len(refs) - limit}" if len(refs) > limit else "")


def _counts(entries: Sequence[Entry]) -> str:
    if not entries:
        return "0"
    links = " ".join(_link(str(i + 1), e.url) for i, e in enumerate(entries[-5:]))
    return f"{len(entries)} ({links})" if any(e.url for e in entries) else str(len(entries))


STATUS_WORDS: Final = {
    "pending": "⏳ pending",
    "confirmed": "✅ confirmed",
    "refuted": "❌ refuted",
    "inconclusive": "❔ inconclusive",
}


def status_word(h: Hypothesis, timeout_hours: int) -> str:
    if h.timed_out:
        return f"❔ inconclusive (pending over {timeout_hours} h)"
    return STATUS_WORDS[h.status]


def summary(board: Board) -> str:
    confirmed = board.confirmed
    if not confirmed:
        return "no root cause yet"
    parts = [f"{h.label} ({_code(h.locations, 2)})" if h.locations else h.label for h in confirmed]
    return "root cause evidenced by " + ", ".join(parts)


def next_action(
    board: Board, *, author: str, escalate_to: Sequence[str], prefix: str, fixes: Sequence[FixAttempt] = ()
) -> str:
    people = _mentions([author, *escalate_to])
    if board.escalated is not None:
        return (
            f"**Escalated to a human** ({people}): every hypothesis failed. Rethink the assumptions, then "
            f"`/{prefix} resume-debug <guidance>` reopens the investigation. No fix starts until then."
        )
    confirmed = board.confirmed
    pending = [h.label for h in board.hypotheses if h.status == "pending"]
    if confirmed and pending:
        return (
            f"**Root cause evidenced** by {', '.join(h.label for h in confirmed)}, but {', '.join(pending)} "
            f"{'is' if len(pending) == 1 else 'are'} still pending: the investigation finishes before the "
            f"fix. Confirm, refute or mark each inconclusive (`/{prefix} refute {pending[0]} …`), then "
            f"`/{prefix} bugfix`."
        )
    confirmed_ids = {h.id for h in confirmed}
    applied = [f for f in fixes if f.hypothesis in confirmed_ids or (f.hypothesis is None and confirmed)]
    waiting = [f for f in applied if not f.verified]
    if waiting:
        where = ", ".join(f"FIX-H{f.hypothesis or '?'} ({_link(f'#{f.number}', f.url)})" for f in waiting[:4])
        return (
            f"**A fix is applied but not verified yet**: {where}. Re-run CI and finish its review until "
            "`steward/regression-first` is green on its head."
        )
    if applied:
        where = ", ".join(f"FIX-H{f.hypothesis or '?'} ({_link(f'#{f.number}', f.url)})" for f in applied[:4])
        return f"**The fix is verified**: {where}. Nothing left on this board; merging it closes the bug."
    if len(confirmed) == 1:
        return (
            f"**Root cause evidenced** by {confirmed[0].label}, no fix yet: plan it — `/{prefix} bugfix` "
            "opens the branch with the failing regression test first."
        )
    if confirmed:
        labels = ", ".join(h.label for h in confirmed)
        return (
            f"**Several root causes confirmed** ({labels}): name the one a fix is for, e.g. "
            f"`/{prefix} bugfix {confirmed[0].label}`."
        )
    if not board.hypotheses:
        return (
            f"**Add hypotheses**: `/{prefix} hypothesis <title>: <statement naming path:line>` — aim for "
            "3 to 5, "
            "most likely first."
        )
    if few_all_failed(board):
        return (
            f"**Every hypothesis so far failed.** Add more (`/{prefix} hypothesis …`) or investigate by "
            "hand; "
            "with 3 failed, Steward asks a human to step in."
        )
    advice = (
        f" Only {len(board.current)} so far: aim for 3 to 5 ranked hypotheses."
        if len(board.current) < 3
        else ""
    )
    return (
        f"**No fix until a root cause is evidenced**: `/{prefix} evidence H1 for|against …`, then "
        f"`/{prefix} confirm H1 <path:line evidence>` or `/{prefix} refute H1 …`.{advice}"
    )


def _mentions(logins: Sequence[str]) -> str:
    seen: list[str] = []
    for login in logins:
        name = login.strip().lstrip("@")
        if name and name.casefold() not in {s.casefold() for s in seen}:
            seen.append(name)
    return ", ".join(f"@{n}" for n in seen) or "a maintainer"


def _where(
    refs: Sequence[str], grounds: Mapping[str, Ground], changed: Collection[str], limit: int = 4
) -> str:
    """The places, each with the line it pointed at when cited (neutralised) and, when the file is not the
    same at the default branch's head any more, "file changed since"."""
    shown: list[str] = []
    for ref in refs[:limit]:
        ground = grounds.get(ref)
        text = f"`{cell(ref)}`"
        if ground is not None:
            text += f" → “{cell(ground.text, 100)}”" if ground.text else " → (an empty line)"
            if ref in changed:
                text += f" _(file changed since `{ground.commit[:7]}`)_"
        shown.append(text)
    return "; ".join(shown) + (f" +{len(refs) - limit}" if len(refs) > limit else "")


def _row(
    h: Hypothesis,
    timeout_hours: int,
    grounds: Mapping[str, Ground] | None = None,
    changed: Collection[str] = (),
    sure: Confidence | None = None,
) -> str:
    where = _where(h.locations, grounds or {}, changed) if h.locations else "_no location yet_"
    decided = (
        f"{_link(_name(h.decided_by), h.decided_url)} {h.decided_at[:16].replace('T', ' ')}"
        if h.decided_by
        else ""
    )
    cells = (
        _link(h.label, h.url),
        str(h.rank),
        cell(h.title),
        cell(h.statement[:200]),
        status_word(h, timeout_hours),
        str(sure) if sure is not None else "",
        _counts(h.evidence_for),
        _counts(h.evidence_against),
        where,
        decided,
    )
    return "| " + " | ".join(cells) + " |"


def _name(login: str) -> str:
    """The board's table and log name people (``neutralise.name``); only its next step (an escalation)
    mentions whom it asks to act."""
    return neutralise.name(login)


def _fix_row(fix: FixAttempt) -> str:
    target = f"H{fix.hypothesis}" if fix.hypothesis else "?"
    verified = (
        "✅ verified (regression-first is green)"
        if fix.verified
        else f"not verified yet ({fix.state or 'no status'})"
    )
    cells = [f"FIX-{target}", "", _link(f"#{fix.number}", fix.url), f"the fix for {target}", verified]
    return "| " + " | ".join(cells + [""] * (COLUMNS - len(cells))) + " |"


def log_line(entry: Entry) -> str:
    when = entry.at[:16].replace("T", " ")
    who = _name(entry.author) if entry.author else "Steward"
    what = {
        "hypothesis": f"added **H{entry.hypothesis}** {cell(entry.title)}",
        "evidence": f"evidence **{entry.stance}** H{entry.hypothesis}",
        "confirm": f"**confirmed** H{entry.hypothesis}",
        "refute": f"**refuted** H{entry.hypothesis}",
        "inconclusive": f"marked H{entry.hypothesis} **inconclusive**",
        "resume": "**resumed** the investigation",
        "escalation": f"**escalated** to a human ({cell(entry.text)} all failed)",
        "rank": f"ranked H{entry.hypothesis} **#{entry.position}**",
    }[entry.kind]
    text = cell(entry.text[:200]) if entry.kind not in ("escalation",) else ""
    if entry.kind in ("hypothesis", "rank"):
        text = ""
    body = f"{what}" + (f": {text}" if text else "")
    if entry.withdrawn:
        body = f"~~{body}~~ _(withdrawn: its comment was edited or deleted)_"
    return f"- {when} — {who} — {body}" + (f" ({_link('comment', entry.url)})" if entry.url else "")


def render_board(
    board: Board,
    *,
    author: str,
    escalate_to: Sequence[str],
    prefix: str,
    timeout_hours: int,
    fixes: Sequence[FixAttempt] = (),
    grounds: Mapping[str, Ground] | None = None,
    changed: Collection[str] = (),
    related: Sequence[Related] = (),
    symptoms: Sequence[str] = (),
) -> str:
    """The board. ``grounds``: what each checked place pointed at when cited; ``changed``: the places whose
    file is not the same at the default branch's head any more."""
    lines = [
        "## 🔎 Root-cause investigation",
        "",
        next_action(board, author=author, escalate_to=escalate_to, prefix=prefix, fixes=fixes),
        "",
    ]
    fixed = {f.hypothesis: f.verified for f in fixes if f.hypothesis is not None}
    if board.hypotheses:
        lines += [f"**Counts:** {counts(board.hypotheses, fixed)}", ""]
    if related:
        near = "; ".join(f"#{r.number} {cell(r.title, 80)} ({cell(r.why, 100)})" for r in related)
        lines += [f"**Related earlier investigations and bugs:** {near}", ""]
    if symptoms:
        lines += ["**Symptoms from CI** (the bug's regression test):", ""]
        lines += [f"- {cell(x, 400)}" for x in symptoms]
        lines.append("")
    if board.hypotheses or fixes:
        lines += [
            "| Id | Rank | Title | Statement | Status | Confidence | For | Against | Where (`path:line`) "
            "| Decided |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        shown = board.ranked[:ROWS_SHOWN]
        if len(board.hypotheses) > len(shown):
            hidden = ["…", "", f"{len(board.hypotheses) - len(shown)} lower-ranked hypotheses not shown"]
            lines.append("| " + " | ".join(hidden + [""] * (COLUMNS - len(hidden))) + " |")
        for h in shown:
            sure = confidence(h, grounds or {}, verified=fixed.get(h.id, False))
            lines.append(_row(h, timeout_hours, grounds, changed, sure))
        lines += [_fix_row(f) for f in fixes]
        lines.append("")
    entries = board.log
    if entries:
        lines += ["### Discoveries", ""]
        folded = len(entries) - LOG_SHOWN
        if folded > 0:
            lines.append(f"- … {folded} earlier entries folded")
        lines += [log_line(e) for e in entries[-LOG_SHOWN:]]
        lines.append("")
    lines.append(f"**Summary:** {summary(board)}.")
    lines += [
        "",
        "<details><summary>How this board works</summary>",
        "",
        f"Commands (write access): `/{prefix} hypothesis <title>: <statement>`, "
        f"`/{prefix} evidence H1 for|against <text>`, `/{prefix} confirm H1 <evidence with path:line>`, "
        f"`/{prefix} refute H1 <evidence>`, `/{prefix} inconclusive H1 <why>`, `/{prefix} rank H2 1`, "
        f"`/{prefix} resume-debug <guidance>`. A hypothesis pending over {timeout_hours} h counts as "
        "inconclusive. Editing or deleting a comment withdraws the evidence it held; the log keeps it. "
        "Every `path:line` of evidence and confirmations is checked against the repository (the default "
        "branch's head, or the commit named with `--at <sha>`): a place that does not exist is refused; the "
        "line it pointed at is shown beside it. Confidence (seed 004): evidence depth 30 %, strength "
        "25 %, coverage 20 %, reproduction 15 %, consistency 10 %; below 40 % low, above 70 % high.",
        "",
        "</details>",
    ]
    return "\n".join(lines)


def render_escalation(
    board: Board, *, author: str, escalate_to: Sequence[str], prefix: str, board_url: str
) -> str:
    people = _mentions([author, *escalate_to])
    lines = [
        f"{people}: **this investigation needs a human.** Every hypothesis so far failed, so the loop stops "
        "here: which assumption about the architecture might be wrong?",
        "",
        f"Write `/{prefix} resume-debug <guidance>` with what to rethink; the fix stays blocked until then.",
        "",
    ]
    for h in board.current[:12]:
        strongest = h.strongest()
        why = (
            cell(strongest.text[:200])
            if strongest
            else ("pending too long" if h.timed_out else "no evidence")
        )
        # A new comment notifies whoever it mentions: people's text is inert (cell), only Steward mentions.
        line = f"**{h.label}** {cell(h.title)} — {h.status}: {why}"
        lines.append(f"- {line}")
    if board_url:
        lines += ["", f"The whole board: {board_url}"]
    return "\n".join(lines)


def report_json(board: Board, fixes: Sequence[FixAttempt], *, repo: str, number: int) -> dict[str, Any]:
    return {
        "bug": f"{repo}#{number}",
        "summary": summary(board),
        "escalated": board.escalated is not None,
        "escalations": [{"at": e.at, "hypotheses": e.text} for e in board.escalations],
        "resumes": [{"at": e.at, "by": e.author, "guidance": e.text} for e in board.resumes],
        "hypotheses": [
            {
                "id": h.label,
                "title": h.title,
                "statement": h.statement,
                "status": h.status,
                "rank": h.rank,
                "timedOut": h.timed_out,
                "locations": list(h.locations),
                "decidedBy": h.decided_by,
                "decidedAt": h.decided_at,
                "evidenceFor": len(h.evidence_for),
                "evidenceAgainst": len(h.evidence_against),
            }
            for h in board.hypotheses
        ],
        "log": [
            {
                "at": e.at,
                "by": e.author,
                "kind": e.kind,
                "hypothesis": f"H{e.hypothesis}" if e.hypothesis and e.kind != "escalation" else None,
                "stance": e.stance or None,
                "text": e.text,
                "locations": list(e.refs),
                "withdrawn": e.withdrawn,
                "url": e.url,
            }
            for e in board.log
        ],
        "fixes": [f.to_json() for f in fixes],
        "escalationDue": escalation_due(board),
    }


def report_text(
    board: Board, fixes: Sequence[FixAttempt], *, repo: str, number: int, timeout_hours: int
) -> str:
    lines = [f"Investigation of {repo}#{number}: {summary(board)}."]
    if board.escalated is not None:
        lines.append(f"Escalated to a human at {board.escalated.at}; waiting for /resume-debug.")
    lines.append("")
    lines.append("Hypotheses:" if board.hypotheses else "No hypotheses.")
    for h in board.hypotheses:
        where = ", ".join(h.locations) or "no location yet"
        decided = f", decided by {h.decided_by} at {h.decided_at}" if h.decided_by else ""
        lines.append(
            f"  {h.label} [{status_word(h, timeout_hours)}] {h.title}: {h.statement} ({where}; "
            f"{len(h.evidence_for)} for, {len(h.evidence_against)} against{decided})"
        )
    for fix in fixes:
        target = f"H{fix.hypothesis}" if fix.hypothesis else "?"
        lines.append(
            f"  FIX-{target} #{fix.number} {'verified' if fix.verified else 'not verified'} ({fix.url})"
        )
    if board.log:
        lines += ["", "Log:"]
        for e in board.log:
            lines.append("  " + log_line(e)[2:].replace("**", ""))
    return "\n".join(lines)

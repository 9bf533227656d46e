"""Pure rendering: the reconciliation comment (one sticky comment per issue), its data block, and the
answers to `/decide` and `/reopen-fork`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.records import neutralise
from handlers.bug_refinement.api import cut_note
from handlers.forks.juror import ForkStatus, Record, RecordedRecord, Verdict
from handlers.forks.records import QUESTION_CHARS

KIND = "forks"
KEY = "reconciliation"
DATA_VERSION = 2
# The forks an issue has listed that the data block remembers at most.
MAX_REMEMBERED = 60
# The data block keeps this many records at most (the newest): it stays far below the comment limit.
MAX_RECORDED = 60
# History lines shown before the oldest are folded into a count.
MAX_HISTORY = 60
HISTORY_BUDGET = 30_000


@dataclass(frozen=True)
class Hints:
    """How the reader writes the commands here (the command prefix) and who may decide, in words."""

    prefix: str = "steward"
    who: str = "people with write access or more"

    def cmd(self, text: str) -> str:
        return f"`/{self.prefix} {text}`"


def cell(text: str, limit: int = 300) -> str:
    """People's text safe in a table cell: one inert line (no mention, closing keyword, HTML or image),
    pipes escaped, bounded."""
    return neutralise.cell(text, limit)


def _reason(record: Record | None, shown: str) -> str:
    """A juror's reason made inert (``shown``), with the people it names as having acted mentioned again:
    "@login may not decide", "reopened by @login: …" are Steward's own mentions, from the forge's data.
    The juror's name comes first in each reason, so only the first occurrence is restored."""
    for login in dict.fromkeys((record.recorder, record.decider) if record else ()):
        if login:
            shown = shown.replace(f"@{neutralise.JOINER}{login}", f"@{login}", 1)
    return shown


def _link(url: str, text: str) -> str:
    return f"[{text}]({url})" if url else text


def _when(stamp: str) -> str:
    return stamp.replace("T", " ").removesuffix("Z") + " UTC" if stamp else ""


def _status_cell(fork: ForkStatus) -> str:
    words = {"resolved": "✅ resolved", "open": "⬜ open", "claimed": "❔ claimed", "invalid": "❌ invalid"}
    text = words[fork.status]
    if not fork.reason:
        return text
    return f"{text} — {_reason(fork.record, cell(fork.reason, 200))}"


def _history_line(record: Record) -> str:
    when = _when(record.recorded_at)
    if record.kind in ("reopen", "drop"):
        where = _link(record.recorder_url, when)
        verb = "reopened" if record.kind == "reopen" else "dropped"
        return f"- **{record.fork}** {verb} by @{record.recorder} ({where}): {cell(record.text, 200)}"
    what = f"“{cell(record.text, 200)}”"
    by = f"@{record.decider or record.recorder}"
    if record.recorder and record.decider and record.recorder.casefold() != record.decider.casefold():
        by += f" (recorded by @{record.recorder})"
    where = _link(record.url, _when(record.decided_at) or when)
    state = (
        "superseded" if record.state == "valid" else f"invalid: {_reason(record, cell(record.reason, 300))}"
    )
    tail = f" — record `{record.hash[:12]}`" if record.hash else ""
    tail += " (legacy record)" if record.legacy else ""
    return f"- **{record.fork}** {what} by {by} in {where} — {state}{tail}"


def history_lines(verdict: Verdict) -> list[str]:
    lines: list[tuple[str, str]] = []
    shown_forks = {f.id for f in verdict.forks}
    for fork in verdict.forks:
        for record in fork.history:
            lines.append((record.recorded_at, _history_line(record)))
    stray = {r.key for r in verdict.stray}
    for record in verdict.records:
        if record.fork not in shown_forks and record.key not in stray:
            lines.append((record.recorded_at, _history_line(record)))
    for record in verdict.stray:
        if record.state == "ignored":
            why = f"not a record: {record.reason}"
        else:
            why = f"not a record: {record.fork or 'no fork'} is not listed on this issue"
        lines.append(
            (
                record.recorded_at,
                f"- {_link(record.recorder_url, _when(record.recorded_at))} by @{record.recorder} — "
                f"{cell(why, 200)}",
            )
        )
    lines.sort(key=lambda pair: pair[0], reverse=True)
    shown: list[str] = []
    size = 0
    for _, line in lines:
        if len(shown) >= MAX_HISTORY or size + len(line) > HISTORY_BUDGET:
            break
        shown.append(line)
        size += len(line) + 1
    folded = len(lines) - len(shown)
    if folded:
        shown.append(f"- … and {folded} older entr{'y' if folded == 1 else 'ies'}")
    return shown


def headline(verdict: Verdict, hints: Hints) -> str:
    total = len(verdict.forks)
    pending = [f for f in verdict.forks if f.status != "resolved"]
    if not total:
        return "**Nothing to do:** this issue no longer lists design forks."
    if not pending:
        total = len([f for f in verdict.forks if not f.removed]) or total
    if not pending:
        return (
            f"**Nothing to do: {'the' if total == 1 else f'all {total}'} "
            f"design fork{'s' if total != 1 else ''} "
            f"{'is' if total == 1 else 'are'} resolved**, each by a checked record below."
        )
    first = pending[0].id
    names = ", ".join(f.id for f in pending)
    removed = [f.id for f in pending if f.removed]
    return (
        f"**Next step: settle {names}** ({len(pending)} of {total} design forks not resolved). "
        f"Record a decision with {hints.cmd(f'decide {first} <resolution>')} in a comment here, or one made "
        f"in another comment with {hints.cmd(f'decide {first} <resolution> --source <comment link>')} "
        f"({hints.who} may decide). Ticking the box in the description is not enough: it records nobody."
        + (
            f" A fork removed from the description without a decision still counts: decide it, or "
            f"{hints.cmd(f'drop-fork {removed[0]} <reason>')}."
            if removed
            else ""
        )
    )


def render_comment(verdict: Verdict, hints: Hints) -> str:
    lines = [*cut_note(verdict.cut), headline(verdict, hints), ""]
    if verdict.forks:
        lines += [
            "| Fork | Question | Status | Resolution | Quote | Decided by | Where | When |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for fork in verdict.forks:
            record = fork.record if fork.status in ("resolved", "invalid") else None
            decision = record is not None and record.kind == "decide"
            by = ""
            if decision and record is not None and record.decider:
                by = f"@{record.decider}"
                if record.recorder.casefold() != record.decider.casefold():
                    by += f" (recorded by @{record.recorder})"
            lines.append(
                "| "
                + " | ".join(
                    [
                        f"**{fork.id}**",
                        cell(fork.question, 200),
                        _status_cell(fork),
                        cell(record.text, 200) if decision and record else cell(fork.claimed, 200),
                        _quote_cell(record) if decision and record else "",
                        by,
                        _link(record.url, "comment") if decision and record and record.url else "",
                        _when(record.decided_at) if decision and record else "",
                    ]
                )
                + " |"
            )
    lags = [f for f in verdict.forks if f.body_lags and f.record is not None]
    if lags:
        lines.append("")
        for fork in lags:
            assert fork.record is not None
            lines.append(
                f"- **Body lags:** {fork.id} is listed open in the description; resolved by "
                f"@{fork.record.decider} in {_link(fork.record.url, 'this comment')}."
            )
    if verdict.duplicates:
        lines += [
            "",
            f"- {', '.join(verdict.duplicates)} listed more than once in the description: the first counts.",
        ]
    quoted = [
        f for f in verdict.forks if f.record is not None and f.record.kind == "decide" and f.record.hash
    ]
    if quoted:
        lines += [
            "",
            "<details><summary>Deciding text and record hashes</summary>",
            "",
            "The record hash is SHA-256 of `v2⏎fork id⏎question⏎resolution⏎quote⏎comment id⏎author⏎"
            "created_at⏎comment body` (the question's first 120 characters as the description listed them "
            "when Steward first saw the record; the deciding comment's id, author, creation time and body); "
            "a legacy record's is the "
            "earlier `fork id⏎resolution⏎comment id⏎author⏎created_at⏎comment body`. "
            "`steward forks OWNER/REPO#N` re-checks every record from the forge alone.",
            "",
            "| Fork | Deciding text (first 200 characters) | Record hash |",
            "|---|---|---|",
        ]
        for fork in quoted:
            assert fork.record is not None
            lines.append(f"| {fork.id} | {cell(fork.record.quote, 220)} | `{fork.record.hash}` |")
        lines += ["", "</details>"]
    history = history_lines(verdict)
    if history:
        lines += [
            "",
            "<details><summary>History (superseded, reopened and refused records, newest first)</summary>",
            "",
            *history,
            "",
            "</details>",
        ]
    lines += [
        "",
        "<sub>This comment is a view: the records are the `/decide` comments and their sources. Editing it "
        "changes nothing; Steward re-derives it on the next event.</sub>",
    ]
    return "\n".join(lines)


def _quote_cell(record: Record) -> str:
    if record.legacy:
        return "(legacy record)"
    return f"“{cell(record.quote, 200)}”" if record.source and record.quote else ""


def data_block(
    verdict: Verdict, previous: Mapping[str, RecordedRecord], remembered: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """What Steward remembers: each record it has seen valid, with its hash and the fork's question as first
    seen (kept as they were; a legacy record gains the question it has now), the forks the issue has listed
    (so a fork removed without a decision is noticed), and the source comments the records cite (so an edit
    there finds this issue)."""
    kept: dict[str, RecordedRecord] = dict(previous)
    for record in verdict.records:
        old = kept.get(record.key)
        if old is not None and not old.question and record.question:
            kept[record.key] = replace(old, question=record.question)
        if record.kind == "decide" and record.state == "valid" and old is None:
            kept[record.key] = RecordedRecord(
                record.key,
                record.fork,
                record.hash,
                record.recorded_at,
                record.text[:100],
                record.decider,
                record.url,
                record.question[:QUESTION_CHARS],
            )
    ordered = sorted(kept.values(), key=lambda r: (r.created_at, r.key))[-MAX_RECORDED:]
    cited = sorted({r.comment_id for r in verdict.records if r.source and r.comment_id})[-MAX_RECORDED:]
    listed = {f.id for f in verdict.forks if not f.removed}
    # The forks listed now come last, so they are never the ones the bound forgets.
    forks = {k: v[:QUESTION_CHARS] for k, v in (remembered or {}).items() if k not in listed}
    for fork in verdict.forks:
        if not fork.removed:
            forks[fork.id] = fork.question[:QUESTION_CHARS]
    return {
        "v": DATA_VERSION,
        "sources": cited,
        "forks": [{"id": k, "question": v} for k, v in list(forks.items())[-MAX_REMEMBERED:]],
        "records": [
            {
                "key": r.key,
                "fork": r.fork,
                "hash": r.hash,
                "at": r.created_at,
                "resolution": r.resolution,
                "decider": r.decider,
                "url": r.url,
                "question": r.question,
                "legacy": r.legacy,
            }
            for r in ordered
        ],
    }


def recorded_from(data: Any) -> dict[str, RecordedRecord]:
    """The data block's records (nothing when it is missing or not ours). A block of the first version
    (before records covered the question and carried a quote) gives legacy records."""
    if not isinstance(data, dict) or data.get("v") not in (1, DATA_VERSION):
        return {}
    first = data.get("v") == 1
    found: dict[str, RecordedRecord] = {}
    for raw in data.get("records", []):
        if not isinstance(raw, dict):
            continue
        try:
            record = RecordedRecord(
                str(raw["key"]),
                str(raw["fork"]),
                str(raw["hash"]),
                str(raw.get("at", "")),
                str(raw.get("resolution", "")),
                str(raw.get("decider", "")),
                str(raw.get("url", "")),
                "" if first else str(raw.get("question", "")),
                first or raw.get("legacy") is True,
            )
        except KeyError:
            continue
        found[record.key] = record
    return found


def remembered_from(data: Any) -> dict[str, str]:
    """The forks the data block remembers the issue listing (id → question); nothing from a first-version
    block (it did not remember them: upgrading starts remembering, it reopens nothing)."""
    if not isinstance(data, dict) or data.get("v") != DATA_VERSION:
        return {}
    found: dict[str, str] = {}
    for raw in data.get("forks", []):
        if isinstance(raw, dict) and isinstance(raw.get("id"), str):
            found[raw["id"]] = str(raw.get("question", ""))
    return found


def refusal(record: Record, hints: Hints) -> str:
    """The answer to a `/decide` whose record does not check out."""
    fix = (
        f"Fix it and write {hints.cmd(f'decide {record.fork} <resolution> --source <comment link>')} again"
        if record.source
        else f"Write {hints.cmd(f'decide {record.fork} <resolution>')} again in a new comment"
    )
    why = _reason(record, neutralise.line(record.reason, 500))
    return (
        f"the record for {record.fork} is refused: {why}. {fix}; {record.fork} stays unresolved until then."
    )


def listed(ids: Sequence[str]) -> str:
    return ", ".join(ids) if ids else "none"

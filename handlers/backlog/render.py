"""The text of the interview and spec comments. Pure: the same state renders the same text, so a
re-run that changes nothing writes nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Final

from bot.records import neutralise
from handlers.backlog.command_hints import Hints
from handlers.backlog.gate import plain
from handlers.backlog.interview import DepRecord, Interview
from handlers.backlog.spec import Spec, SpecRecord
from handlers.bug_refinement.api import cut_note

__all__ = ["render_interview", "render_spec"]

_CELL_LIMIT: Final = 240
_BACKTICKS: Final = re.compile(r"`+")


def _cell(text: str | None, limit: int = _CELL_LIMIT) -> str:
    if text is None:
        return "—"
    return neutralise.cell(text, limit) or "—"


def _json_block(data: Any, summary: str) -> str:
    if isinstance(data, list):  # one row a line: readable, and a third the size of indent=2
        text = "[\n" + ",\n".join("  " + json.dumps(item, ensure_ascii=False) for item in data) + "\n]"
    else:
        text = json.dumps(data, ensure_ascii=False, indent=2)
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"<details><summary>{summary}</summary>\n\n{fence}json\n{text}\n{fence}\n\n</details>"


def render_deps(deps: Sequence[DepRecord]) -> str:
    parts: list[str] = []
    for dep in deps:
        if dep.state == "declared":
            parts.append(f"#{dep.number} (declared as blocking this issue)")
        elif dep.state == "linked":
            parts.append(f"#{dep.number} (linked on the forge as blocking this issue)")
        elif dep.state == "listed":
            parts.append(f"#{dep.number} (listed here: {dep.note or 'this forge has no issue dependencies'})")
        elif dep.state == "skipped":
            parts.append(f"#{dep.number} — skipped: {dep.note}" if dep.number else f"… {dep.note}")
        else:
            parts.append(f"#{dep.number} — refused: {dep.note}")
        if dep.prior:
            parts[-1] += f" — prior work: {neutralise.cell(dep.prior, 400)}"
    return "; ".join(parts)


def _gate_details(interview: Interview, cap: int, hints: Hints) -> str:
    explain = (
        f"The interview continues while questions are open (CONTINUE) and stops when they are answered "
        f"(STOP-CLEAN), when {cap} rounds are done (STOP-CLEAN when what, scope and acceptance are settled, "
        f"else STOP-DEGRADED), or on {hints.cmd('enough')} (STOP-ENOUGH)."
    )
    now = f"Now: **{interview.gate}** — {interview.gate_reason}." if interview.gate else ""
    return "\n".join(
        [
            "<details><summary>How the interview ends (the stop gate)</summary>",
            "",
            explain,
            "",
            now,
            "",
            "</details>",
        ]
    )


def render_interview(
    interview: Interview,
    *,
    author: str,
    cap: int,
    spec_version: int,
    hints: Hints | None = None,
    prefix: str = "steward",
) -> str:
    hints = hints or Hints(prefix=prefix)
    cycle_round = interview.round - interview.cycle_start + 1
    lines: list[str] = cut_note(interview.cut, interview.language)
    if interview.status == "interviewing":
        lines += [
            f"## Backlog refinement — round {cycle_round} of at most {cap}",
            "",
            f"**Next step:** answer the questions below with {hints.cmd('answer <id> <text>')} (the text "
            "may continue on the next lines; several answers may share a comment), or "
            f"{hints.cmd('enough')} to end the interview and draft the spec now. Who may answer: "
            f"{hints.who('answer')}.",
            "",
        ]
        if interview.asking:
            lines += ["### Questions this round", ""]
            for n, row_id in enumerate(interview.asking, 1):
                row = interview.ledger.row(row_id)
                if row is not None:
                    question = neutralise.line(row.question, 1000)
                    lines.append(f"{n}. **{row.id}** · {row.dimension.value} — {question}")
            lines.append("")
        else:
            lines += [
                "Every row is resolved. Amend any row with "
                f"{hints.cmd('answer <id> <text>')}, then I draft the next spec; "
                f"{hints.cmd('enough')} drafts it now.",
                "",
            ]
    elif interview.status == "stopped":
        lines += [
            "## Backlog refinement — interview ended",
            "",
            f"**Next step:** review **Spec v{spec_version}** in the spec comment; "
            f"{hints.run('approve-spec')} approves it, {hints.run('edit-spec')} reopens the interview for "
            "another round.",
            "",
            f"The interview ended because {plain(interview.gate)}.",
            "",
        ]
    elif interview.status == "approved":
        lines += [
            "## Backlog refinement — approved",
            "",
            f"Nothing to do: Spec v{spec_version} is approved and locked. {hints.new_version()} starts a new "
            "version.",
            "",
        ]
    else:
        lines += [
            "## Backlog refinement — cancelled",
            "",
            f"The draft was discarded. {hints.run('refine')} starts again.",
            "",
        ]
    if interview.found:
        lines += ["**Found in the description:** " + "; ".join(interview.found), ""]
    if interview.probes:
        lines += ["### Probe-scan", ""]
        for probe in interview.probes[-10:]:
            lines.append(f"- Round {probe.round}: {_cell(probe.reason, 600)}")
        lines.append("")
    if interview.deps:
        lines += [f"**Blocked by:** {render_deps(interview.deps)}", ""]
    lines += [
        "### Gap ledger",
        "",
        "| id | dimension | status | source | question | answer |",
        "|---|---|---|---|---|---|",
    ]
    for row in interview.ledger.rows:
        lines.append(
            f"| {row.id} | {row.dimension.value} | {row.status} | {row.source} | {_cell(row.question)} "
            f"| {_cell(row.answer)} |"
        )
    if not interview.ledger.rows:
        lines.append("| — | — | — | — | no gaps found | — |")
    lines += ["", _gate_details(interview, cap, hints)]
    lines += ["", _json_block(interview.ledger.public(), "Ledger JSON (for `steward ledger verdict`)")]
    return "\n".join(lines)


def _spec_body(spec: Spec, *, heading: str, open_heading: str = "## Open Questions") -> list[str]:
    lines = [heading, "", f"**Goal.** {neutralise.line(spec.goal, 2000)}", "", "**Requirements**", ""]
    lines += [f"- {neutralise.line(line, 1000)}" for line in spec.requirements] or ["- (none yet)"]
    if spec.blocked_by:
        lines += ["", "blocked-by: " + ", ".join(f"#{n}" for n in spec.blocked_by)]
    lines += ["", "**Q&A**", ""]
    if spec.qa:
        lines += ["| id | question | answer |", "|---|---|---|"]
        lines += [f"| {q.id} | {_cell(q.question)} | {_cell(q.answer)} |" for q in spec.qa]
    else:
        lines.append("No question was asked: the description covered every dimension.")
    lines += ["", open_heading, ""]
    if spec.open_questions:
        lines += [
            f"- **{q.id}** · {q.dimension} — {neutralise.line(q.question, 1000)}" for q in spec.open_questions
        ]
    else:
        lines.append("None.")
    return lines


def _status_title(spec: Spec) -> str:
    if spec.status == "approved":
        return "approved"
    if spec.status == "discarded":
        return "discarded"
    if spec.status == "superseded":
        return "superseded"
    if spec.verdict == "STOP-DEGRADED":
        return "draft — not refined (stopped degraded)"
    return "draft — awaiting approval"


def render_spec(
    record: SpecRecord,
    *,
    title: str,
    current_level: str | None,
    level_prefix: str,
    approved_label: str,
    deps: Sequence[DepRecord] = (),
    hints: Hints | None = None,
    prefix: str = "steward",
) -> str:
    hints = hints or Hints(prefix=prefix)
    spec = record.current
    lines: list[str] = []
    if spec is None:
        lines += [
            "## Spec — no current version",
            "",
            f"The last draft was discarded. {hints.run('refine')} starts again.",
        ]
    else:
        lines += _spec_body(
            spec, heading=f"## Spec v{spec.version} — {_cell(title, 120)} ({_status_title(spec)})"
        )
        prior = [d for d in deps if d.prior]
        if prior:
            lines += ["", "**Prior work** (what the closed blockers delivered):", ""]
            lines += [f"- #{d.number}: {neutralise.cell(d.prior, 400)}" for d in prior]
        refused = [d for d in deps if d.state == "refused"]
        if refused:
            notes = "; ".join(f"#{d.number}: {neutralise.line(d.note, 300)}" for d in refused)
            lines += ["", "**Dependencies refused:** " + notes]
        lines += [
            "",
            f"**How the interview ended:** {plain(spec.verdict)} <sub>(stop gate: {spec.verdict})</sub>.",
        ]
        if spec.verdict == "STOP-DEGRADED":
            lines += [
                "",
                "> [!WARNING]",
                "> The interview hit its round cap with a core dimension (WHAT, SCOPE or ACCEPTANCE) still "
                "open, so this is **not** presented as refined. Recommendation: split the card into smaller "
                "items, or run an exploration spike first, then refine again.",
            ]
        lines += ["", f"**Level:** scored **{spec.level}** ({'; '.join(spec.level_reasons)})."]
        if spec.status == "approved":
            decision = f" Level: {spec.level_decision}." if spec.level_decision else ""
            if spec.title_decision:
                decision += f" Title: {neutralise.line(spec.title_decision, 460)}."
            lines += [
                "",
                f"**Approved** by @{spec.approved_by} and locked; `{approved_label}` is set.{decision} "
                f"{hints.new_version()} starts a new version.",
            ]
        elif spec.status == "draft":
            level_note = ""
            if spec.new_title and spec.new_title != title:
                level_note += (
                    f" The interview renamed the item: approval sets the title to "
                    f"“{neutralise.line(spec.new_title, 200)}”."
                )
            if current_level is None:
                level_note += (
                    f" The issue has no `{level_prefix}*` label; approval also sets "
                    f"`{level_prefix}{spec.level}`."
                )
            elif current_level != spec.level:
                level_note += (
                    f" The issue is labelled `{level_prefix}{current_level}` but the spec scores "
                    f"**{spec.level}**: approve with {hints.cmd('approve-spec apply')} (set "
                    f"`{level_prefix}{spec.level}`), {hints.cmd('approve-spec keep')} (keep "
                    f"`{level_prefix}{current_level}`) or {hints.cmd('approve-spec L1|L2|L3')}."
                )
            lines += [
                "",
                f"**Next step: approval.** {hints.run('approve-spec')} locks it and sets `{approved_label}`; "
                f"{hints.run('edit-spec')} reopens the interview for another round; "
                f"{hints.run('cancel-refine')} discards this draft.{level_note}",
            ]
        lines += ["", _json_block(spec.authored(), f"Spec v{spec.version} JSON")]
    if record.history or record.folded:
        lines += ["", "<details><summary>Earlier versions</summary>", ""]
        if record.folded:
            lines += [f"{record.folded} older version(s) are no longer kept here.", ""]
        for old in reversed(record.history):
            why = f" — {neutralise.line(old.note, 600)}" if old.note else ""
            lines += _spec_body(
                old,
                heading=f"#### Spec v{old.version} ({old.status}{why})",
                open_heading="**Open Questions**",
            )
            lines.append("")
        lines.append("</details>")
    return "\n".join(lines)

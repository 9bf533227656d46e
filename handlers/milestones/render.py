"""What the dashboard, the reopen notice and the `/gate` reply say (pure: text in, text out).

DESIGN §8: the reader's next action first, the person who must act mentioned (in the notice, never in the
dashboard, whose edits notify nobody), long tables folded, every list bounded ("… N more") so a body stays
far below 60,000 characters. Item titles are other people's text: they are shown as plain text in one
table cell (no HTML, no mentions, no line breaks).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bot.forge import ForgeKind, Issue
from bot.records import neutralise
from handlers.milestones.gate import KIND_ORDER, NO_FACTS, Blocker, BlockerKind, Facts, GateLabels, GateResult
from handlers.milestones.provenance import LabelProof
from handlers.milestones.state import DashboardData

STAMP_PREFIX = "<sub>Updated "
MAX_TABLE_ROWS = 100
MAX_GROUP_LINES = 25
MAX_NOTICE_REASONS = 8
MAX_TITLE = 80
BAR_WIDTH = 20

GROUP_TITLES: dict[BlockerKind, str] = {
    "open-item": "Open items",
    "audit-missing": "Audits missing",
    "unresolved-fork": "Unresolved design forks",
    "no-scenario": "No field-test scenario",
    "scenario-open": "Field tests still open",
    "scenario-not-passed": "Field tests not passed",
    "bug-open": "Open bugs",
    "finding-open": "Findings neither closed nor ratified",
    "promise-uncovered": "Promises without a passing scenario",
}

# How the dashboard's coverage list says where each promise's scenario stands.
COVERAGE_WORDS = {
    "passed": "✓ passed",
    "open": "✗ scenario still open",
    "not-passed": "✗ scenario closed without a passing label that counts",
    "not-scenario": "✗ not labelled as a field-test scenario",
    "not-in-milestone": "✗ not in this milestone",
    "unconfirmed": "✗ unconfirmed: its command comment was edited or deleted, or its author lost the access",
}


def plain(text: str, limit: int = MAX_TITLE) -> str:
    """Someone's text as one harmless table cell: one inert line (bot.records.neutralise: no mention, closing
    keyword, HTML or image), no pipes, no backticks."""
    return neutralise.cell(text, limit).replace("`", "'")


def dashboard_title(milestone_title: str) -> str:
    return f"Milestone {neutralise.line(milestone_title, 200)} — dashboard"


def progress(items: Sequence[Issue]) -> tuple[int, int, int, str]:
    """(closed, total, percent, bar)."""
    total = len(items)
    closed = sum(1 for item in items if item.state == "closed")
    percent = (100 * closed) // total if total else 0
    filled = (BAR_WIDTH * closed) // total if total else 0
    return closed, total, percent, "█" * filled + "░" * (BAR_WIDTH - filled)


def _has(item: Issue, name: str) -> bool:
    return item.has_label(name)


@dataclass(frozen=True)
class Columns:
    """The label names the items table reads (the gate's, and the refinement verdict labels)."""

    gate: GateLabels
    refinement: tuple[tuple[str, str], ...] = (
        ("refinement:approved", "approved"),
        ("refinement:needs-info", "rejected"),
        ("refinement:needs-triage", "rejected"),
        ("refinement:rejected", "rejected"),
        ("refinement:pending", "pending"),
    )
    fork_resolved: str = "forks:resolved"


def handle(login: str) -> str:
    """``@login`` shown, never a mention (the dashboard's edits notify nobody, and must not start to)."""
    return neutralise.name(login)


def label_by(name: str, proofs: Sequence[LabelProof]) -> str:
    """ "`fieldtest:pass` by @x", and "(does not count)" when it does not (the section below says why)."""
    found = next((p for p in proofs if p.label.casefold() == name.casefold()), None)
    if found is None:
        return f"`{name}`"
    by = f" by {handle(found.by)}" if found.by else ""
    return f"`{name}`{by}" + ("" if found.counts else " (does not count)")


def _row(item: Issue, cols: Columns, proofs: Sequence[LabelProof] = (), forks: str | None = None) -> str:
    g = cols.gate
    refinement = next((word for name, word in cols.refinement if _has(item, name)), "—")
    audits = [name for name in (g.audit_clean, g.audit_ratified) if _has(item, name)]
    audit = ", ".join(label_by(a, proofs) for a in audits) or ("**missing**" if _has(item, g.cycle) else "—")
    tests = []
    if _has(item, g.fieldtest):
        passed = _has(item, g.fieldtest_pass)
        tests.append(f"scenario, {label_by(g.fieldtest_pass, proofs)}" if passed else "scenario")
    for name, word in (
        (g.finding_bug, "bug"),
        (g.finding_friction, "friction"),
        (g.finding_spec_gap, "spec gap"),
    ):
        if _has(item, name):
            ratified = f", {label_by(g.ratified, proofs)}" if _has(item, g.ratified) else ""
            tests.append(f"finding: {word}{ratified}")
    fork_cell = "resolved" if _has(item, cols.fork_resolved) else "—"
    if forks is not None:
        fork_cell = f"**open** ({plain(forks, 60)})"
    kind = "PR" if item.is_pull_request else "issue"
    state = "✔ closed" if item.state == "closed" else "open"
    cells = (
        f"#{item.number}",
        plain(item.title),
        f"{kind}, {state}",
        refinement,
        audit,
        "; ".join(tests) or "—",
        fork_cell,
    )
    return "| " + " | ".join(cells) + " |"


def items_table(
    items: Sequence[Issue],
    cols: Columns,
    proofs: Mapping[int, tuple[LabelProof, ...]] | None = None,
    facts: Facts = NO_FACTS,
) -> list[str]:
    proofs = proofs or {}
    lines = [
        "| # | Title | State | Refinement | Audit | Field test | Forks |",
        "|---|---|---|---|---|---|---|",
    ]
    ordered = sorted(items, key=lambda item: item.number)
    lines += [
        _row(item, cols, proofs.get(item.number, ()), facts.open_forks.get(item.number))
        for item in ordered[:MAX_TABLE_ROWS]
    ]
    if len(ordered) > MAX_TABLE_ROWS:
        lines.append(f"| … | {len(ordered) - MAX_TABLE_ROWS} more | | | | | |")
    return lines


def _blocker_line(blocker: Blocker, titles: dict[int, str]) -> str:
    if blocker.number is None:
        return f"- {blocker.missing}"
    return f"- #{blocker.number} {plain(titles.get(blocker.number, ''), 60)} — {blocker.missing}"


def blocker_groups(result: GateResult, items: Sequence[Issue]) -> list[str]:
    titles = {item.number: item.title for item in items}
    lines: list[str] = []
    for kind in KIND_ORDER:
        group = [b for b in result.blockers if b.kind == kind]
        if not group:
            continue
        leg = "complete" if group[0].leg == "complete" else "functional"
        lines += ["", f"**{GROUP_TITLES[kind]}** ({len(group)}, {leg} leg)"]
        lines += [_blocker_line(b, titles) for b in group[:MAX_GROUP_LINES]]
        if len(group) > MAX_GROUP_LINES:
            lines.append(f"- … {len(group) - MAX_GROUP_LINES} more")
    return lines


def _count(blockers: Sequence[Blocker]) -> str:
    kinds = [k for k in KIND_ORDER if any(b.kind == k for b in blockers)]
    parts = [f"{GROUP_TITLES[k].lower()}: {sum(1 for b in blockers if b.kind == k)}" for k in kinds]
    return "; ".join(parts)


def leg_lines(result: GateResult, marker: str) -> list[str]:
    """The two legs with ✓ / ✗ / exempt and their reasons."""
    complete = "**Complete: ✓** every item is closed or settled, audited where needed, with no open fork"
    if result.complete:
        complete = f"**Complete: ✗** {_count(result.complete)}"
    if result.exempt:
        functional = (
            "**Functional: exempt (internal)** — someone who may set the passing labels said so with `/gate "
            "internal` here, so the complete leg suffices"
        )
    elif result.functional:
        functional = f"**Functional: ✗** {_count(result.functional)}"
    else:
        functional = (
            "**Functional: ✓** every scenario is closed with its passing label, set by someone allowed to, "
            "and every finding is settled"
        )
    return [f"- {complete}", f"- {functional}"]


def promise_lines(result: GateResult, cmds: Commands) -> list[str]:
    """The milestone's promises and whether each has its passing scenario (the coverage), or that it has no
    promise list and what the functional leg asks then."""
    add = f"`/{cmds.prefix} gate promise add <text> — #<scenario>`"
    if result.coverage is None:
        return [
            "",
            f"**Promises:** none listed, so the functional leg asks for at least one passing scenario. "
            f"{cmds.who_labels[:1].upper()}{cmds.who_labels[1:]} can list what the milestone promises users "
            f"with {add} here.",
        ]
    covered = sum(1 for c in result.coverage if c.covered)
    lines = [
        "",
        f"**Promises:** {covered} of {len(result.coverage)} have a passing scenario"
        + (" (exempt: internal)" if result.exempt else "")
        + ":",
    ]
    lines += [
        f"{c.index}. {plain(c.promise.text, 200)} — #{c.promise.scenario}: {COVERAGE_WORDS[c.state]}"
        for c in result.coverage
    ]
    return lines


def summary_lines(result: GateResult, limit: int = MAX_NOTICE_REASONS) -> list[str]:
    """The first failing reasons, one line each, for a notice or a reply."""
    lines = [
        f"- {b.leg}: " + (f"#{b.number} — {b.missing}" if b.number is not None else b.missing)
        for b in result.blockers[:limit]
    ]
    if len(result.blockers) > limit:
        lines.append(f"- … {len(result.blockers) - limit} more (see the dashboard)")
    return lines


@dataclass(frozen=True)
class Commands:
    """How the texts name the commands and who may run them (their permissions on this repository)."""

    prefix: str = "steward"
    who_overrides: str = "maintain+"
    who_labels: str = "people with maintain access or more"

    def gate(self) -> str:
        return f"`/{self.prefix} gate`"

    def override(self) -> str:
        return f"`/{self.prefix} gate override <reason>`"


def _by(login: str | None) -> str:
    return f" by @{login}" if login else ""


def _next_action(
    *,
    state: str,
    closed_at: str | None,
    data: DashboardData,
    result: GateResult,
    gate_at: str | None,
    cmds: Commands,
) -> str:
    if state == "closed" and data.settled_closed(closed_at):
        closure = data.closure
        if closure is not None and closure.verdict == "overridden":
            # An override is outside the gate: the milestone closed without it, never "passed".
            why = (
                f" (override{_by(data.override.by)}: “{plain(data.override.reason, 300)}”)"
                if data.override is not None
                else " (overridden)"
            )
            return f"⚠️ **Closed{_by(closure.by)} at {closure.at} without the gate{why}.** Nothing to do."
        if closure is not None:
            return f"✅ **Nothing to do: closed{_by(closure.by)} at {closure.at}; gate passed.**"
        return "**Closed.** Steward did not see it close, so it did not check the gate; nothing to do."
    if state == "closed":
        when = f" at {gate_at}" if gate_at else " after the grace period"
        if result.passed or data.override is not None:
            return f"⏳ **Closed at {closed_at}.** Steward checks the gate{when}; nothing to do."
        return (
            f"⏳ **Closed at {closed_at} while the gate is blocked.** Steward checks the gate again{when}: "
            "unless the blockers below are cleared by then, it reopens the milestone."
        )
    if data.override is not None:
        return (
            f"⚠️ **The gate is overridden**{_by(data.override.by)} ({data.override.at}): "
            f"“{plain(data.override.reason, 300)}”. Steward will not reopen this milestone while the "
            "override stands — while its command comment is unedited and its author may still override; "
            "reopening the milestone after it is closed ends the override."
        )
    if result.passed:
        return (
            "✅ **Ready to close:** every item is done and every scenario carries its passing label. Close "
            "the milestone when you are ready."
        )
    reopened = ""
    if data.reopened is not None:
        reopened = (
            f" Steward reopened it at {data.reopened.at}: it was closed{_by(data.reopened.by)} while the "
            "gate was blocked."
        )
    count = len(result.blockers)
    return (
        f"❌ **Not ready to close: {count} blocker{'s' if count != 1 else ''}.** Clear them (below) before "
        f"closing the milestone: closed now, it would be reopened.{reopened} If it should close anyway "
        f"(abandoned, done another way), {cmds.who_overrides} may write {cmds.override()} here."
    )


@dataclass(frozen=True)
class DashboardView:
    milestone_title: str
    milestone_url: str
    state: str
    closed_at: str | None
    items: tuple[Issue, ...]
    result: GateResult
    data: DashboardData
    internal_marker: str
    columns: Columns
    commands: Commands
    # When a pending closure's gate is checked (a closed milestone whose closure is not settled yet).
    gate_at: str | None = None
    # What the labels alone do not say (``handlers.milestones.gate_facts``).
    facts: Facts = NO_FACTS
    proofs: Mapping[int, tuple[LabelProof, ...]] = field(default_factory=dict)
    # The "Ratifications" section's lines (handlers.milestones.ratifications), empty when there are none.
    ratifications: tuple[str, ...] = ()


def uncounted_lines(proofs: Mapping[int, tuple[LabelProof, ...]], who: str) -> list[str]:
    """The passing labels that do not count, each with why (bounded)."""
    rows = [
        f"- #{number} {label_by(p.label, (p,))}: {p.why}"
        for number, found in sorted(proofs.items())
        for p in found
        if not p.counts
    ]
    if not rows:
        return []
    lines = [
        "",
        "### Labels that do not count",
        "",
        f"A passing label counts only when applied by {who}, who still hold that access; ask one of them to "
        "remove it and apply it again:",
        *rows[:MAX_GROUP_LINES],
    ]
    if len(rows) > MAX_GROUP_LINES:
        lines.append(f"- … {len(rows) - MAX_GROUP_LINES} more")
    return lines


def render_dashboard(view: DashboardView, *, updated_at: str) -> str:
    closed, total, percent, bar = progress(view.items)
    link = (
        f"[{plain(view.milestone_title, 200)}]({view.milestone_url})"
        if view.milestone_url
        else plain(view.milestone_title, 200)
    )
    verdict = "passes ✓" if view.result.passed else "is blocked ✗"
    lines = [
        f"## Milestone {link}: the gate {verdict}",
        "",
        _next_action(
            state=view.state,
            closed_at=view.closed_at,
            data=view.data,
            result=view.result,
            gate_at=view.gate_at,
            cmds=view.commands,
        ),
        "",
        f"**Progress:** {closed} of {total} items closed ({percent}%) `{bar}`",
        "",
        "### The gate",
        "",
        *leg_lines(view.result, view.internal_marker),
        *promise_lines(view.result, view.commands),
    ]
    if view.data.override is not None:
        o = view.data.override
        lines += ["", f"**Override**{_by(o.by)} at {o.at}: “{plain(o.reason, 300)}”."]
        if o.overrode:
            lines.append("It set aside: " + "; ".join(plain(line, 200) for line in o.overrode) + ".")
    lines += view.ratifications
    if view.result.blockers:
        lines += ["", "### Blockers", *blocker_groups(view.result, view.items)]
    lines += uncounted_lines(view.proofs, view.commands.who_labels)
    lines += [
        "",
        "<details><summary>" + f"All {total} items</summary>",
        "",
        *(
            items_table(view.items, view.columns, view.proofs, view.facts)
            if view.items
            else ["No issue or pull request is in this milestone yet."]
        ),
        "",
        "</details>",
        "",
        how_it_works(view.columns.gate, view.internal_marker, view.commands),
        "",
        f"{STAMP_PREFIX}{updated_at} · Steward keeps this page and rewrites it when the milestone changes; "
        f"edits here are overwritten. {view.commands.gate()} (anyone) checks the gate now.</sub>",
    ]
    return "\n".join(lines)


def how_it_works(labels: GateLabels, marker: str, cmds: Commands) -> str:
    return "\n".join(
        [
            "<details><summary>How the gate works</summary>",
            "",
            f"- **Complete**: no open issue or pull request, except open `{labels.finding_friction}` / "
            f"`{labels.finding_spec_gap}` findings labelled `{labels.ratified}`; every item labelled "
            f"`{labels.cycle}` carries `{labels.audit_clean}` or `{labels.audit_ratified}`; no item with an "
            f"unresolved design fork (as its decision records say, whatever its `{labels.fork_open}` label).",
            f"- **Functional**: at least one issue labelled `{labels.fieldtest}` (a scenario); every "
            f"scenario closed with `{labels.fieldtest_pass}`; no open `{labels.finding_bug}`; every friction "
            f"or spec-gap finding closed, or open with `{labels.ratified}`. A milestone declared internal "
            f"with `/gate internal` on its dashboard by {cmds.who_labels} is exempt (the description's line "
            f"`{marker}` alone is not: anyone with write may edit it).",
            f"- **Promises**: {cmds.who_labels} may list what the milestone promises its users, each with "
            f"the scenario issue that demonstrates it (`/{cmds.prefix} gate promise add <text> — "
            f"#<scenario>`, `/{cmds.prefix} gate promise remove <number>`); the functional leg then needs "
            "each promise's scenario to pass.",
            f"- `{labels.fieldtest_pass}`, `{labels.audit_clean}`, `{labels.audit_ratified}` and "
            f"`{labels.ratified}` count only when applied by {cmds.who_labels}, who still hold that access; "
            "Steward puts back such a label that anyone else adds to or removes from an item of a milestone.",
            "- Closing a milestone whose gate is blocked gets it reopened after a short grace period, with "
            f"the reasons here. {cmds.override()} ({cmds.who_overrides}) records a deliberate exception; "
            "reopening the milestone ends it.",
            "",
            "</details>",
        ]
    )


def without_stamp(body: str) -> str:
    """A dashboard body without its "Updated …" line: what decides whether it needs rewriting."""
    lines = body.replace("\r\n", "\n").rstrip().split("\n")
    return "\n".join(line for line in lines if not line.startswith(STAMP_PREFIX))


def mentions(logins: Sequence[str]) -> str:
    """``@alice @org/team`` from settings (names that are not logins or teams are dropped)."""
    found = []
    for name in logins:
        name = name.strip().lstrip("@")
        if re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,99})(?:/[A-Za-z0-9_.-]{1,100})?", name):
            found.append(f"@{name}")
    return " ".join(dict.fromkeys(found))


def reopen_notice(
    *,
    milestone_title: str,
    closer: str | None,
    notify: Sequence[str],
    forge: ForgeKind,
    result: GateResult,
    cmds: Commands,
    admins: Sequence[str] | None = (),
) -> str:
    """The short new comment when Steward reopens a milestone: it mentions who must act — who closed it, else
    `milestones.notify`, else the repository's ``admins`` (None: the forge would not say who they are)."""
    title = plain(milestone_title, 200)
    if closer:
        head = f"@{closer}: I reopened milestone **{title}**: you closed it while its gate was blocked."
    else:
        who = mentions(notify)
        unknown = (
            "Gitea does not record who closed a milestone"
            if forge == "gitea"
            else "I could not tell who closed it"
        )
        hint = "" if who else "; set `milestones.notify` in Steward's configuration to have someone mentioned"
        if not who and admins:
            who = mentions(admins)
            hint = (
                ", so I mention the repository's admins; set `milestones.notify` in Steward's configuration "
                "to choose who is mentioned instead"
            )
        elif not who and admins is None:
            hint = (
                ", and I could not read who administers this repository: the forge shows collaborators' "
                "permissions only to a repository admin, and Steward's account is not one here. Set "
                "`milestones.notify` in Steward's configuration to have someone mentioned"
            )
        head = (
            f"{who + ': ' if who else ''}I reopened milestone **{title}**: it was closed while its gate was "
            f"blocked. {unknown}{hint}."
        )
    return "\n".join(
        [
            head,
            "",
            "**To close it:** clear these, then close it again:",
            *summary_lines(result),
            "",
            f"If it should close anyway (abandoned, done another way), {cmds.who_overrides} may write "
            f"{cmds.override()} on this issue. The dashboard above has the details.",
        ]
    )


def gate_reply(
    *, milestone_title: str, result: GateResult, dashboard: int | None, data: DashboardData | None
) -> str:
    """The answer to `/gate`: the result now, changing nothing."""
    title = plain(milestone_title, 200)
    where = f" The dashboard is #{dashboard}." if dashboard else " Its dashboard is being opened."
    if result.passed:
        exempt = " (an internal milestone: no field test is asked of it)" if result.exempt else ""
        return f"✅ The gate of milestone **{title}** passes{exempt}: it may be closed.{where}"
    lines = [
        f"❌ The gate of milestone **{title}** is blocked ({len(result.blockers)}):",
        *summary_lines(result, 15),
    ]
    if data is not None and data.override is not None:
        lines += [
            "",
            f"The gate is overridden{_by(data.override.by)}: Steward will not reopen this milestone while "
            "the override stands.",
        ]
    return "\n".join(lines) + f"\n\n{where.strip()}"

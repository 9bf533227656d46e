"""The overview issue's text: what needs whom, the reader's next action first (DESIGN §8).

People are shown, never mentioned: a login is written through the neutraliser (``@`` and a word joiner), so
a page read every morning notifies nobody. Titles are people's text, quoted inert. Every list is bounded
(``MAX_LINES`` a section, "… N more"), so the body stays far under the forges' limit (DESIGN §3.11).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.records import neutralise
from handlers.triage.overview_rules import ON_MAINTAINERS, Line, MilestoneLine, Overview, Section

TITLE = "Steward: what needs whom"
STAMP_PREFIX = "<sub>Changed "
MAX_LINES = 25
MAX_TITLE = 120
# An item quiet this long says so (a shorter wait is not worth a rewrite of the page each day).
QUIET_DAYS = 7


@dataclass(frozen=True)
class Words:
    """What the page tells people to write, in this repository's words."""

    prefix: str = "steward"
    needs_info: str = "refinement:needs-info"
    needs_triage: str = "refinement:needs-triage"
    approved: str = "refinement:approved"
    forks_open: str = "forks:open"
    stale_after_days: int = 7


# Each section: its heading, and what the reader does about it.
def _heads(w: Words) -> dict[Section, tuple[str, str]]:
    return {
        "waiting_maintainers": (
            "Bugs waiting for the maintainers",
            f"The reporter's part is complete (`{w.needs_triage}`): add the maintainers' sections, or "
            "answer the verdict's questions in the thread.",
        ),
        "escalated": (
            "Root-cause investigations handed to a person",
            f"Every hypothesis failed, or someone asked for a person (`needs-human`): read the board and "
            f"give guidance with `/{w.prefix} resume-debug <guidance>`.",
        ),
        "in_review": (
            "Bugfixes in review",
            "The fix is pushed and the pull request is ready: review it.",
        ),
        "held": (
            "Bugfixes held",
            "Held, or its review budget ran out: a person decides whether it goes on.",
        ),
        "forks_open": (
            "Open design forks",
            f"A design decision is open (`{w.forks_open}`): decide it in the thread with "
            f"`/{w.prefix} decide F1 <choice and why>`.",
        ),
        "stale_claims": (
            "Claims gone stale",
            f"Claimed, with no activity from the claimant for {w.stale_after_days} days or more: ask them, "
            "or free it for someone else.",
        ),
        "unclaimed": (
            "Refined and unclaimed",
            f"Ready to work on (`{w.approved}`), nobody assigned: take one with `/{w.prefix} claim`.",
        ),
        "red_proof": (
            "Bugfixes waiting for red proof",
            "The regression test is pushed and must fail in CI before the fix goes in: nothing to do unless "
            "CI is stuck.",
        ),
        "waiting_reporter": (
            "Bugs waiting for their reporter",
            f"The reporter was asked for more (`{w.needs_info}`): nothing to do until they answer.",
        ),
    }


def person(login: str) -> str:
    """A login shown, never a mention (the neutraliser's word joiner after the ``@``)."""
    return neutralise.line(f"@{login}", 60)


def _item(line: Line) -> str:
    title = neutralise.line(line.title, MAX_TITLE)
    link = f"[#{line.number}]({line.url})" if line.url else f"#{line.number}"
    extra = []
    if line.people:
        extra.append(", ".join(person(p) for p in line.people))
    if line.note:
        extra.append(neutralise.line(line.note, 200))
    if line.idle_days is not None and line.idle_days >= QUIET_DAYS:
        extra.append(f"quiet {line.idle_days} d")
    return f"- {link} {title}" + (f" — {' · '.join(extra)}" if extra else "")


def _bounded(lines: Sequence[str], total: int) -> list[str]:
    shown = list(lines[:MAX_LINES])
    if total > len(shown):
        shown.append(f"- … {total - len(shown)} more")
    return shown


def headline(overview: Overview) -> str:
    waiting = overview.on_maintainers()
    if not waiting:
        return "**Nothing waits on the maintainers.** What others are doing is below."
    parts = [
        f"{_heads(Words())[name][0].lower()} ({len(overview.lines(name))})"
        for name in overview.sections
        if name in ON_MAINTAINERS and overview.lines(name)
    ]
    items = f"{waiting} item{'s' if waiting != 1 else ''} wait{'s' if waiting == 1 else ''}"
    return f"**{items} on the maintainers:** " + "; ".join(parts) + "."


def _milestone(m: MilestoneLine) -> str:
    title = neutralise.line(m.title, MAX_TITLE)
    link = f"[{title}]({m.url})" if m.url else title
    total = m.open_items + m.closed_items
    due = f", due {m.due_on[:10]}" if m.due_on else ""
    if m.dashboard is None:
        gate = "no dashboard yet"
    elif m.verdict == "pass":
        gate = f"gate passes ([dashboard #{m.dashboard}]({m.dashboard_url}))"
    elif m.verdict == "blocked":
        gate = f"gate blocked by {m.blockers} ([dashboard #{m.dashboard}]({m.dashboard_url}))"
    else:
        gate = f"gate not checked yet ([dashboard #{m.dashboard}]({m.dashboard_url}))"
    return f"- {link}: {m.closed_items} of {total} closed{due}; {gate}"


def render_overview(overview: Overview, words: Words, *, changed_at: str) -> str:
    heads = _heads(words)
    lines = [f"## {TITLE}", "", headline(overview)]
    for name in overview.sections:
        found = overview.lines(name)
        if not found:
            continue
        heading, todo = heads[name]
        lines += ["", f"### {heading} ({len(found)})", "", todo, ""]
        lines += _bounded([_item(line) for line in found], len(found))
    lines += ["", f"### Milestones ({len(overview.milestones)})", ""]
    if overview.milestones:
        lines += _bounded([_milestone(m) for m in overview.milestones], len(overview.milestones))
    else:
        lines.append("No open milestone.")
    quiet = [heads[name][0] for name in overview.sections if not overview.lines(name)]
    if quiet:
        lines += ["", "Nothing listed under: " + "; ".join(q.lower() for q in quiet) + "."]
    lines += [
        "",
        "<details><summary>How this page works</summary>",
        "",
        "Steward keeps this issue and rewrites it when the repository's issues, pull requests or milestones "
        "change (a minute later at most, and once for a burst of changes); edits here are overwritten. It "
        "is read from the labels Steward keeps and its own records: each line links to the thread where the "
        "decision lives. People are shown, never notified. Switch it off with `triage.overview: false` in "
        "Steward's configuration file.",
        "",
        "</details>",
        "",
        f"{STAMP_PREFIX}{changed_at} · `/{words.prefix} help` lists the commands.</sub>",
    ]
    return "\n".join(lines)


def without_stamp(body: str) -> str:
    """An overview body without its "Changed …" line: what decides whether it needs rewriting."""
    lines = body.replace("\r\n", "\n").rstrip().split("\n")
    return "\n".join(line for line in lines if not line.startswith(STAMP_PREFIX))

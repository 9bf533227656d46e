"""What the onboarding pull request proposes and says. Pure: settings, the registry and issue texts in;
files, labels and markdown out.

- ``capabilities``: the capabilities this Steward runs (a settings section some handler or command belongs
  to) and whether the settings switch them on.
- ``labels_for``: the labels those capabilities use, with their colours — created when the configuration is
  merged (or on ``/steward init --labels``), never deleted.
- ``issue_language``: English, or Portuguese when the repository's issues use RA9's Portuguese headings.
- ``proposal``: the files of the pull request; ``pull_body``: what it says to the maintainer, with, from
  ``BranchFacts`` (what was read on the default branch), the proposed ``bugfix.required_contexts`` and whether
  `steward/regression-first` is required there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from bot.commands.context import RegistryView
from bot.commands.permissions import who_may
from bot.config.label_texts import LABEL_DESCRIPTIONS
from bot.config.repo_file import merge
from bot.config.settings import HandlerSettings, Permission
from bot.forge import ForgeKind, Issue
from bot.records import neutralise
from handlers.bug_refinement.api import (
    BugVerdict,
    Language,
    blockers_for,
    document_language,
    parse_document,
    questions,
    refine_bug,
)
from handlers.bugfix.api import Requirement, requirement_lines
from handlers.onboarding.config_file import PROPOSED_PRESET, Note, config_path, config_text
from handlers.onboarding.templates import template_files

__all__ = [
    "BRANCH",
    "TITLE",
    "BranchFacts",
    "Capability",
    "LabelSpec",
    "Proposal",
    "capabilities",
    "issue_language",
    "labels_for",
    "proposal",
    "pull_body",
    "switched_on_text",
]

BRANCH: Final = "steward/configure"
TITLE: Final = "Configure Steward"
MARKER: Final = "<!-- steward:onboarding -->"
_ENABLED: Final = re.compile(r"^Whether Steward runs (.+) on this repository\.$")

# Colours of the labels whose settings carry none (hex, without #): the ones the capabilities use when they
# create a label themselves, so a label made here looks the same as one made later.
BUG_COLOR: Final = "d73a4a"
REFINE_COLOR: Final = "c5def5"
DASHBOARD_COLOR: Final = "5319e7"
NEUTRAL_COLOR: Final = "ededed"


@dataclass(frozen=True)
class Capability:
    section: str
    what: str  # in a maintainer's words, from the section's `enabled` description
    enabled: bool


@dataclass(frozen=True)
class LabelSpec:
    name: str
    color: str
    description: str


def capabilities(registry: RegistryView, settings: HandlerSettings) -> list[Capability]:
    """The capabilities this Steward runs, in the settings' order: a section with an ``enabled`` switch that
    some registered handler, command or re-derivation belongs to (or a re-derivation or periodic job is named
    after, for a capability that checks its switch itself)."""
    registered = {spec.section for spec in registry.events}
    registered |= {spec.section for spec in registry.commands.values()}
    registered |= {spec.section for spec in registry.reconcilers}
    registered |= {spec.name for spec in registry.reconcilers} | {spec.name for spec in registry.periodic}
    found: list[Capability] = []
    for name, info in HandlerSettings.model_fields.items():
        annotation = info.annotation
        fields = getattr(annotation, "model_fields", {})
        if name not in registered or "enabled" not in fields:
            continue
        described = _ENABLED.match(fields["enabled"].description or "")
        what = described.group(1) if described else name.replace("_", " ")
        found.append(Capability(name, what, bool(getattr(getattr(settings, name), "enabled", True))))
    return found


def labels_for(settings: HandlerSettings, running: Sequence[str]) -> list[LabelSpec]:
    """The labels of the capabilities in ``running`` (sections) that ``settings`` switches on, once each."""
    on = {section for section in running if getattr(getattr(settings, section, None), "enabled", False)}
    found: dict[str, LabelSpec] = {}

    def add(name: str, color: str, description: str) -> None:
        if name and name.casefold() not in found:
            found[name.casefold()] = LabelSpec(name, color, description[:100])

    if "bug_refinement" in on:
        bug = settings.bug_refinement
        add(bug.bug_label, BUG_COLOR, "A bug report (Steward checks it against RA9)")
        # Steward's own labels speak the repository's language (`language`), as their descriptions do later.
        add(bug.refine_label, REFINE_COLOR, LABEL_DESCRIPTIONS[settings.language]["refine"])
        for verdict in ("pending", "needs-info", "needs-triage", "approved"):
            add(
                bug.label_for(verdict),
                bug.color_for(verdict),
                bug.description_for(verdict, settings.language),
            )
    if "backlog" in on:
        backlog = settings.backlog
        colors = backlog.label_colors
        add(
            backlog.refine_label, colors.get(backlog.refine_label, REFINE_COLOR), "Steward: refine this issue"
        )
        add(backlog.epic_label, colors.get(backlog.epic_label, "3e4b9e"), "An epic: Steward never refines it")
        add(backlog.bug_label, colors.get(backlog.bug_label, BUG_COLOR), "A bug report")
        add(backlog.approved_label, colors.get(backlog.approved_label, "0e8a16"), "Steward: spec approved")
        for level in ("L1", "L2", "L3"):
            name = f"{backlog.level_label_prefix}{level}"
            add(name, colors.get(name, REFINE_COLOR), f"Steward: a level-{level[1]} spec")
    if "milestones" in on:
        labels = settings.milestones.labels
        add(labels.dashboard, DASHBOARD_COLOR, "Steward: a milestone's dashboard")
        for name, info in type(labels).model_fields.items():
            if name != "dashboard":
                add(getattr(labels, name), NEUTRAL_COLOR, f"Milestone gate: {info.description or name}")
    if "forks" in on:
        add(settings.forks.open_label, "fbca04", "Steward: a design fork is open")
        add(settings.forks.resolved_label, "0e8a16", "Steward: every design fork is resolved")
    if "triage" in on:
        add(settings.triage.claimed_label, "c2e0c6", "Steward: someone has claimed this issue")
    return list(found.values())


def issue_language(bodies: Sequence[str]) -> Language:
    """Portuguese when more of the issues written with RA9 headings use the Portuguese names, else English."""
    pt = en = 0
    for body in bodies:
        doc = parse_document(body)
        if not any(h.level == 2 for h in doc.headings):
            continue
        if document_language(doc) == "pt":
            pt += 1
        else:
            en += 1
    return "pt" if pt > en else "en"


@dataclass(frozen=True)
class Proposal:
    files: dict[str, str]  # path → text
    config_path: str
    labels: list[LabelSpec]
    capabilities: list[Capability]
    language: Language
    # Templates the repository already has at the paths Steward would use: kept, never overwritten.
    kept: tuple[str, ...] = ()


def command_permissions(registry: RegistryView, settings: HandlerSettings) -> dict[str, Permission]:
    return {name: settings.permission(name, spec.permission) for name, spec in registry.commands.items()}


@dataclass(frozen=True)
class BranchFacts:
    """What Steward read on the default branch for the bugfix capability: the CI contexts that reported on
    its head ``sha`` (None: they could not be read, ``unread`` says why) and whether
    `steward/regression-first` is a required check there."""

    branch: str
    requirement: Requirement
    sha: str = ""
    contexts: tuple[str, ...] | None = None
    unread: str = ""
    html_url: str = ""
    # The CODEOWNERS file the forge reads on the branch ("" when there is none).
    codeowners: str = ""


KEY_CONTEXTS: Final = "bugfix.required_contexts"
KEY_REVIEWERS: Final = "bugfix.request_reviewers"


def reviewers_note(facts: BranchFacts) -> Note | None:
    """With code owners: proposed on (Steward asks an independent one once a bugfix's fix is pushed)."""
    if not facts.codeowners:
        return None
    return Note(
        f"Proposed: `{facts.codeowners}` names code owners, and neither forge asks them to review a bugfix "
        "pull request (it opens as a draft): with this on, Steward asks an independent one once the fix is "
        "pushed.",
        True,
    )


def _at(facts: BranchFacts) -> str:
    return f"`{facts.branch}`'s head" + (f" (`{facts.sha[:10]}`)" if facts.sha else "")


def contexts_note(facts: BranchFacts) -> Note:
    """What the configuration file says at ``bugfix.required_contexts``."""
    fill = (
        "list the contexts that run the tests (the names a commit's checks show) and uncomment the line: "
        "until then a failure of any context counts as the red proof."
    )
    if facts.contexts is None:
        return Note(f"Steward could not read the CI of {_at(facts)}: {facts.unread}. To choose: {fill}")
    if not facts.contexts:
        return Note(f"No CI had reported on {_at(facts)} when this was proposed. Once CI runs, {fill}")
    return Note(
        f"Proposed from the CI contexts seen on {_at(facts)}: keep only those that run the tests, then "
        "uncomment the line. Only their failures then count as the red proof; a context listed here that "
        "never reports on a bugfix pull request keeps its status pending.",
        list(facts.contexts),
    )


def _bugfix_lines(facts: BranchFacts, kind: ForgeKind, path: str) -> list[str]:
    at = _at(facts)
    if facts.contexts is None:
        seen = [
            f"I could not read the CI of {at}: {neutralise.line(facts.unread, 300)}. In `{path}`, list "
            f"under `{KEY_CONTEXTS}` the contexts that run the tests (the names a commit's checks show)."
        ]
    elif not facts.contexts:
        seen = [
            f"No CI had reported on {at} when I opened this, so I cannot propose `{KEY_CONTEXTS}`. Once CI "
            f"runs, list there (in `{path}`) the contexts that run the tests — the names a commit's checks "
            "show."
        ]
    else:
        names = ", ".join(neutralise.code(c) for c in facts.contexts)
        seen = [
            f"CI contexts seen on {at}: {names}. `{path}` proposes them for `{KEY_CONTEXTS}`, commented "
            "out: I cannot tell which of them run the tests, so keep only those that do and uncomment the "
            "line. A context listed there that never reports on a bugfix pull request keeps its status "
            "pending."
        ]
    return [
        "## Regression-first bugfix branches",
        "",
        "**Which CI proves a bug red.** "
        + seen[0]
        + " Until the setting is filled in, a failure of any context (a lint error too) counts as the red "
        "proof.",
        "",
        "**Whether the forge enforces the status.** "
        + "\n".join(requirement_lines(facts.requirement, kind, facts.html_url)),
    ]


def _notes(facts: BranchFacts | None) -> dict[str, Note] | None:
    if facts is None:
        return None
    found = {KEY_CONTEXTS: contexts_note(facts)}
    if (owners := reviewers_note(facts)) is not None:
        found[KEY_REVIEWERS] = owners
    return found


def proposal(
    kind: ForgeKind,
    registry: RegistryView,
    settings: HandlerSettings,
    language: Language,
    facts: BranchFacts | None = None,
    taken: frozenset[str] = frozenset(),
) -> Proposal:
    settings = merge(settings, {"preset": PROPOSED_PRESET})  # what merging the proposed file switches on
    caps = capabilities(registry, settings)
    path = config_path(kind)
    config = config_text(
        commands={name: spec.permission for name, spec in registry.commands.items()},
        switches=[(c.section, c.what) for c in caps],
        path=path,
        notes=_notes(facts),
    )
    templates = template_files(kind, language, taken)
    files = {path: config, **templates}
    labels = labels_for(settings, [c.section for c in caps])
    kept = tuple(sorted(p for p in taken if p in template_files(kind, language)))
    return Proposal(files, path, labels, caps, language, kept)


# --- what the pull request says -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Preview:
    """The verdict Steward would post on the most recent open bug report (``issue`` None: there is none)."""

    issue: Issue | None
    verdict: BugVerdict | None = None


def preview(bugs: Sequence[Issue], *, repo: str, refined_at: str) -> Preview:
    open_bugs = [issue for issue in bugs if issue.state == "open" and not issue.is_pull_request]
    if not open_bugs:
        return Preview(None)
    latest = max(open_bugs, key=lambda issue: issue.number)
    return Preview(latest, refine_bug(latest.body, bug_id=f"{repo}#{latest.number}", refined_at=refined_at))


MAX_BLOCKERS_SHOWN: Final = 10


def _preview_lines(found: Preview, bug_label: str) -> list[str]:
    if found.issue is None or found.verdict is None:
        return [f"There is no open issue labelled `{bug_label}` yet, so there is nothing to preview."]
    issue, verdict = found.issue, found.verdict
    title = neutralise.line(issue.title, 120)
    if verdict.verdict == "approved":
        return [
            f"On #{issue.number} ({title}), the most recent open `{bug_label}` issue, I would post ✅ "
            "**approved**: the report has every section RA9 asks for."
        ]
    # What the real verdict asks the reporter (issue 34 §4): its questions, not every blocker.
    asked = questions(verdict) if blockers_for(verdict, "reporter") else []
    theirs = len(blockers_for(verdict, "maintainers"))
    where = f"On #{issue.number} ({title}), the most recent open `{bug_label}` issue"
    things = f"{theirs} thing{'s' if theirs != 1 else ''}"
    rest = f"and list {things} for the maintainers to add (folded in the verdict)."
    if not asked:
        return [f"{where}, I would tell its author that their part is complete, {rest}"]
    return [
        f"{where}, I would ask its author {len(asked)} question{'s' if len(asked) != 1 else ''}, as the "
        "verdict would:",
        "",
        *(f"{k}. {neutralise.line(q, 500)}" for k, q in enumerate(asked, 1)),
        "",
        rest[0].upper() + rest[1:],
    ]


def pull_body(
    plan: Proposal,
    *,
    kind: ForgeKind,
    registry: RegistryView,
    settings: HandlerSettings,
    found: Preview,
    requested_by: str = "",
    fingerprint: str = "",
    facts: BranchFacts | None = None,
) -> str:
    """The pull request's description, for a maintainer deciding whether to merge it. ``fingerprint``: the key
    Steward signs its records with."""
    on = [c for c in plan.capabilities if c.enabled]
    who = f" (asked for by @{requested_by})" if requested_by else ""
    # One screen: the decision, what Steward will do, the preview; the reference tables folded below.
    lines = [
        MARKER,
        f"**Next step:** a maintainer reviews and merges this pull request to switch Steward on here{who}. "
        "Nothing changes until it is merged: Steward reads its settings from the default branch only. "
        'Closing it without merging means "not now" — Steward will not open it again on its own.',
        "",
        "## What Steward will do in this repository",
        "",
        *(f"- **{c.what[0].upper() + c.what[1:]}** — on (`{c.section}.enabled`)" for c in on),
        "",
        f"`{plan.config_path}` says so in one line, `preset: {PROPOSED_PRESET}`: change it to "
        "`refine-bugs` for RA9 bug refinement alone, or to `everything` for backlog refinement, decision "
        "provenance and the milestone gate too (every milestone then needs a passed field test), before or "
        "after merging; a section's own `enabled` overrides the preset.",
        "",
        "## A preview on this repository",
        "",
        *_preview_lines(found, settings.bug_refinement.bug_label),
        "",
        *_folded(
            f"What this pull request adds ({len(plan.files)} files)",
            [
                *(f"- `{path}`" for path in plan.files),
                *(
                    [
                        "",
                        "Kept as they are (this repository has them; Steward's templates are added "
                        "beside them under names of their own): "
                        + ", ".join(f"`{path}`" for path in plan.kept)
                        + ".",
                    ]
                    if plan.kept
                    else []
                ),
                "",
                f"`{plan.config_path}` shows every setting with its default, commented out; "
                f"`steward check-config {plan.config_path}` checks a change. The issue templates ask for "
                "what Steward checks: an RA9 bug report (what the reporter saw and how to reproduce it — "
                "section 1 and the recipe 5.1–5.4; the maintainers add their sections later) and a backlog "
                "item (What, Why, Scope, Acceptance criteria, Constraints, Edge cases, Dependencies)"
                + (", in Portuguese, as this repository's issues are." if plan.language == "pt" else "."),
            ],
        ),
        *_folded(
            f"The labels Steward will create when this is merged ({len(plan.labels)})",
            [
                "Existing labels are kept as they are, and Steward never deletes a label.",
                "",
                "| Label | Colour | Meaning |",
                "|---|---|---|",
                *(f"| `{label.name}` | `#{label.color}` | {label.description} |" for label in plan.labels),
            ],
        ),
    ]
    sections_on = {c.section for c in on}
    commands = [
        "Write a command on its own line in an issue or pull-request comment.",
        "",
        "| Command | What it does | Who may run it |",
        "|---|---|---|",
    ]
    for name, spec in sorted(registry.commands.items()):
        if spec.section and spec.section not in sections_on:
            continue
        permission = settings.permission(name, spec.permission)
        cells = (
            f"`/steward {spec.usage}`",
            neutralise.placeholders(spec.help),
            who_may(permission, short=True, forge=kind),
        )
        commands.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    lines += _folded(f"The commands people can use ({len(commands) - 4}), and who may run them", commands)
    if facts is not None and "bugfix" in sections_on:
        bugfix = _bugfix_lines(facts, kind, plan.config_path)
        lines += _folded(
            "Regression-first bugfixes: which CI proves a bug red, and whether the status is required",
            bugfix[2:],
        )
    if fingerprint:
        lines += _folded(
            "Checking Steward's records",
            [
                f"Steward signs every record it keeps in a comment with the key `{fingerprint}`. Anyone "
                "can check them without trusting Steward: `steward verify OWNER/REPO#N --public-key "
                "steward.pub`, with the public key the operator prints with `steward public-key`.",
            ],
        )
    return "\n".join(lines).rstrip() + "\n"


def _folded(summary: str, body: Sequence[str]) -> list[str]:
    return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>", ""]


def switched_on_text(running: Sequence[Capability], queued: Sequence[int], more: int, prefix: str) -> str:
    """Said once on the merged onboarding pull request: Steward is on, what it will do, what it does now."""
    lines = ["**Steward is on in this repository.** It will run:", ""]
    lines += [f"- {c.what}" for c in running] or ["- nothing yet: every capability is switched off."]
    if queued:
        shown = ", ".join(f"#{n}" for n in queued)
        lines += [
            "",
            f"It is refining now the open issues already labelled for refinement: {shown}"
            + (f" (and {more} more at the next hourly catch-up)." if more else "."),
        ]
    lines += [
        "",
        f"`/{prefix} help` on any issue lists what each person may run; `/{prefix} config` shows the "
        "settings in force.",
    ]
    return "\n".join(lines)


def closing_text(closed_by: str) -> str:
    who = f"@{closed_by}: " if closed_by else ""
    return (
        f"{who}understood — not now. Steward will not open this pull request again on its own, and nothing "
        "changes in this repository. When you want it back, a repository admin comments `/steward init` on "
        "any issue; `/steward init --labels` creates Steward's labels without the configuration."
    )

"""Pure rules of the everyday commands: which labels Steward manages itself (never set through `/label`),
who may set the others (`triage.labels`), and what `/label` asks for."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.config.settings import HandlerSettings
from bot.config.triage import LabelRole
from handlers.bugfix.api import MANAGED_LABELS as BUGFIX_LABELS
from handlers.debug.api import MANAGED_LABELS as DEBUG_LABELS


def managed_labels(settings: HandlerSettings) -> frozenset[str]:
    """Every label Steward sets or removes itself, casefolded, derived from the settings (whether or not
    the capability is switched on): a person setting one by command would forge Steward's own state."""
    bug, backlog, gate = settings.bug_refinement, settings.backlog, settings.milestones.labels
    names = [
        *bug.verdict_labels(),
        bug.refine_label,
        backlog.refine_label,
        backlog.approved_label,
        *(f"{backlog.level_label_prefix}{level}" for level in ("L1", "L2", "L3")),
        settings.forks.open_label,
        settings.forks.resolved_label,
        gate.dashboard,
        gate.fieldtest_pass,
        gate.audit_clean,
        gate.audit_ratified,
        gate.ratified,
        settings.triage.hold_label,
        settings.triage.overview_label,
        *BUGFIX_LABELS,
        *DEBUG_LABELS,
        settings.triage.claimed_label,
        settings.triage.duplicate_label,
    ]
    return frozenset(name.casefold() for name in names if name)


def managed_prefixes(settings: HandlerSettings) -> tuple[str, ...]:
    """The namespaces of Steward's labels (`bugfix:`, `debug:`, `audit:`, `level:` …, casefolded), from the
    managed names themselves: a state Steward adds under one later is Steward's too."""
    prefixes = {settings.backlog.level_label_prefix.casefold()}
    prefixes |= {name.partition(":")[0] + ":" for name in managed_labels(settings) if ":" in name}
    return tuple(sorted(p for p in prefixes if p))


def is_managed(settings: HandlerSettings, label: str) -> bool:
    folded = label.casefold()
    return folded in managed_labels(settings) or folded.startswith(managed_prefixes(settings))


# --- `/label` -----------------------------------------------------------------------------------------

_ROLE_ORDER: tuple[LabelRole, ...] = ("anyone", "author", "triage", "write", "maintain", "admin")


@dataclass(frozen=True)
class LabelChange:
    add: tuple[str, ...]
    remove: tuple[str, ...]
    bad: tuple[str, ...]  # words that name no label (`-` alone)


def parse_label_args(args: Sequence[str]) -> LabelChange:
    """`/label bug "good first issue" -wontfix +docs`: names to add (a `+` may lead) and to remove (`-`
    leads); each once, the last word about a name winning."""
    wanted: dict[str, tuple[str, bool]] = {}
    bad: list[str] = []
    for word in args:
        remove = word.startswith("-")
        name = word[1:] if word[:1] in "+-" else word
        name = name.strip()
        if not name:
            bad.append(word)
            continue
        wanted.pop(name.casefold(), None)
        wanted[name.casefold()] = (name, remove)
    return LabelChange(
        tuple(n for n, r in wanted.values() if not r), tuple(n for n, r in wanted.values() if r), tuple(bad)
    )


def label_role(settings: HandlerSettings, name: str) -> LabelRole:
    """The least access that may set or remove label ``name`` by `/label`: the roles of ``triage.labels``
    that name it (names before `*` patterns, so `maintain: [P0]` restricts P0 beside `anyone: ["*"]`);
    a label no entry names, triage — what the forge asks."""
    folded = name.casefold()
    listed = settings.triage.labels
    for exact in (True, False):
        for role in _ROLE_ORDER:
            for pattern in listed.get(role, ()):
                wanted = pattern.casefold()
                if (wanted == folded) if exact else ("*" in wanted and fnmatch.fnmatchcase(folded, wanted)):
                    return role
    return "triage"


def nearest(name: str, existing: Iterable[str], n: int = 3) -> list[str]:
    """The existing label names closest to ``name`` (for "did you mean")."""
    names = list(existing)
    by_fold = {x.casefold(): x for x in names}
    close = difflib.get_close_matches(name.casefold(), list(by_fold), n=n, cutoff=0.5)
    if not close:
        stem = name.casefold()[:3]
        close = [f for f in by_fold if len(stem) == 3 and f.startswith(stem)][:n]
    return [by_fold[c] for c in close]

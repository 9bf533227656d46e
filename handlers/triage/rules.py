"""Pure rules of the everyday commands: which labels Steward manages itself (never set through `/label`)."""

from __future__ import annotations

from bot.config.settings import HandlerSettings
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
        *BUGFIX_LABELS,
        *DEBUG_LABELS,
        settings.triage.claimed_label,
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

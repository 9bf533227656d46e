"""The milestone gate: a pure function over a milestone's description and its items (issues and pull
requests with their labels). No I/O.

- **Complete**: no open item, except open `finding:friction` / `finding:spec-gap` items labelled `ratified`
  (settled, for both legs); every item labelled `cycle` carries `audit:clean` or `audit:ratified`; no item
  has an unresolved design fork — as decision provenance's juror says (``Facts.open_forks``), never the
  `forks:open` label, which anyone with triage can take off by hand.
- **Functional**: at least one item labelled `fieldtest` (a scenario); every scenario closed with
  `fieldtest:pass`; no open item labelled `finding:bug`; every `finding:friction` / `finding:spec-gap` item
  closed, or open with `ratified`.
- **Promises**: a milestone with a promise list (`/gate promise`, kept in the dashboard's signed record)
  needs, in its functional leg, a passing scenario for each promise — the scenario issue the promise names;
  without a list, at least one scenario, as before.
- **Exempt from Functional**: the milestone's description has the line `internal: true`
  (``MilestoneSettings.internal_marker``).

A passing label (`fieldtest:pass`, `audit:clean`, `audit:ratified`, `ratified`) counts only when the
caller's ``Facts`` do not set it aside (``handlers.milestones.provenance``: who applied it, and whether they
hold `milestones.label_permission` now). Labels are compared without regard to case, as the forges do. The
result lists every failing reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from bot.config.settings import MilestoneLabels
from bot.forge import Issue

Leg = Literal["complete", "functional"]
BlockerKind = Literal[
    "open-item",
    "audit-missing",
    "unresolved-fork",
    "no-scenario",
    "scenario-open",
    "scenario-not-passed",
    "bug-open",
    "finding-open",
    "promise-uncovered",
]

# The order blockers are grouped in, with a heading for each group.
KIND_ORDER: tuple[BlockerKind, ...] = get_args(BlockerKind)


@dataclass(frozen=True)
class GateLabels:
    """The label names the gate reads (the repository's, from its settings)."""

    cycle: str = "cycle"
    audit_clean: str = "audit:clean"
    audit_ratified: str = "audit:ratified"
    fieldtest: str = "fieldtest"
    fieldtest_pass: str = "fieldtest:pass"
    finding_bug: str = "finding:bug"
    finding_friction: str = "finding:friction"
    finding_spec_gap: str = "finding:spec-gap"
    ratified: str = "ratified"
    fork_open: str = "forks:open"

    @classmethod
    def from_settings(cls, labels: MilestoneLabels, fork_open: str) -> GateLabels:
        return cls(
            cycle=labels.cycle,
            audit_clean=labels.audit_clean,
            audit_ratified=labels.audit_ratified,
            fieldtest=labels.fieldtest,
            fieldtest_pass=labels.fieldtest_pass,
            finding_bug=labels.finding_bug,
            finding_friction=labels.finding_friction,
            finding_spec_gap=labels.finding_spec_gap,
            ratified=labels.ratified,
            fork_open=fork_open,
        )


@dataclass(frozen=True)
class Blocker:
    """One failing reason: its leg, its kind, the item it is about (None: the milestone as a whole) and
    what is missing, in a reader's words."""

    leg: Leg
    kind: BlockerKind
    number: int | None
    missing: str


@dataclass(frozen=True)
class Promised:
    """A promise as the gate reads it: its text, the scenario issue named for it, and whether its command
    still holds (``confirmed``: its comment unedited, its author permitted now)."""

    text: str
    scenario: int
    confirmed: bool = True


CoverageState = Literal["passed", "open", "not-passed", "not-scenario", "not-in-milestone", "unconfirmed"]


@dataclass(frozen=True)
class Coverage:
    """Whether one promise (``index``: its number on the list, from 1) has a passing scenario."""

    index: int
    promise: Promised
    state: CoverageState

    @property
    def covered(self) -> bool:
        return self.state == "passed"


@dataclass(frozen=True)
class GateResult:
    complete: tuple[Blocker, ...]
    functional: tuple[Blocker, ...]
    exempt: bool
    # Each promise's coverage; None: the milestone has no promise list (at least one passing scenario).
    coverage: tuple[Coverage, ...] | None = None

    @property
    def passed(self) -> bool:
        return not self.complete and not self.functional

    @property
    def verdict(self) -> Literal["pass", "blocked"]:
        return "pass" if self.passed else "blocked"

    @property
    def blockers(self) -> tuple[Blocker, ...]:
        return (*self.complete, *self.functional)


@dataclass(frozen=True)
class Facts:
    """What the labels alone do not say: the passing labels that do not count, per item (label, case-folded
    → why, in a reader's words), and the items with an unresolved design fork (→ what is unresolved)."""

    uncounted: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    open_forks: Mapping[int, str] = field(default_factory=dict)

    def has(self, item: Issue, name: str) -> bool:
        """The item carries ``name`` and it counts."""
        return item.has_label(name) and self.why_not(item, name) is None

    def why_not(self, item: Issue, name: str) -> str | None:
        return self.uncounted.get(item.number, {}).get(name.casefold())

    def aside(self, item: Issue, *names: str) -> str:
        """ " (`x` is there but does not count: why)" for the ``names`` the item carries that do not count."""
        parts = [
            f"`{name}` is there but does not count: {why}"
            for name in names
            if item.has_label(name) and (why := self.why_not(item, name)) is not None
        ]
        return f" ({'; '.join(parts)})" if parts else ""


NO_FACTS = Facts()


def _normal(line: str) -> str:
    return " ".join(line.split()).casefold()


def is_internal(description: str, marker: str) -> bool:
    """Whether a line of the description is the marker (blanks and case aside), e.g. ``internal: true``."""
    wanted = _normal(marker)
    if not wanted:
        return False
    return any(_normal(line) == wanted for line in (description or "").splitlines())


def is_finding(item: Issue, labels: GateLabels) -> bool:
    """A friction or spec-gap finding (a bug finding is never settled by ratifying it)."""
    return item.has_label(labels.finding_friction) or item.has_label(labels.finding_spec_gap)


def is_settled(item: Issue, labels: GateLabels, facts: Facts = NO_FACTS) -> bool:
    """An open friction or spec-gap finding that was ratified: accepted as it is, for both legs."""
    return item.state == "open" and is_finding(item, labels) and facts.has(item, labels.ratified)


def _kind_word(item: Issue) -> str:
    return "pull request" if item.is_pull_request else "issue"


def _complete(items: Sequence[Issue], labels: GateLabels, facts: Facts) -> list[Blocker]:
    out: list[Blocker] = []
    for item in items:
        if item.state == "open" and not is_settled(item, labels, facts):
            aside = facts.aside(item, labels.ratified) if is_finding(item, labels) else ""
            missing = f"open {_kind_word(item)}: finish it or move it to another milestone{aside}"
            out.append(Blocker("complete", "open-item", item.number, missing))
    for item in items:
        if item.has_label(labels.cycle) and not (
            facts.has(item, labels.audit_clean) or facts.has(item, labels.audit_ratified)
        ):
            missing = f"labelled `{labels.cycle}` without `{labels.audit_clean}` or `{labels.audit_ratified}`"
            missing += facts.aside(item, labels.audit_clean, labels.audit_ratified)
            out.append(Blocker("complete", "audit-missing", item.number, missing))
    for item in items:
        if item.number in facts.open_forks:
            missing = f"has an unresolved design fork ({facts.open_forks[item.number]}): resolve it"
            out.append(Blocker("complete", "unresolved-fork", item.number, missing))
    return out


def coverage(
    promises: Sequence[Promised], items: Sequence[Issue], labels: GateLabels, facts: Facts
) -> tuple[Coverage, ...]:
    """Each promise against its scenario, passing as the gate judges any scenario: an item of this milestone
    labelled `fieldtest`, closed with a `fieldtest:pass` that counts."""
    by_number = {item.number: item for item in items}
    out: list[Coverage] = []
    for index, promise in enumerate(promises, start=1):
        item = by_number.get(promise.scenario)
        state: CoverageState
        if not promise.confirmed:
            state = "unconfirmed"
        elif item is None:
            state = "not-in-milestone"
        elif not item.has_label(labels.fieldtest):
            state = "not-scenario"
        elif item.state == "open":
            state = "open"
        elif not facts.has(item, labels.fieldtest_pass):
            state = "not-passed"
        else:
            state = "passed"
        out.append(Coverage(index, promise, state))
    return tuple(out)


def _uncovered(cover: Coverage, labels: GateLabels) -> Blocker:
    why = {
        "unconfirmed": "its `/gate promise add` comment was edited or deleted, or its author may no longer "
        "set the passing labels: someone who may removes it or adds it again",
        "not-in-milestone": "its scenario is not an item of this milestone: add it to the milestone",
        "not-scenario": f"its scenario is not labelled `{labels.fieldtest}`",
        "open": f"its scenario is still open: run it, then close it with `{labels.fieldtest_pass}`",
        "not-passed": f"its scenario is closed without a `{labels.fieldtest_pass}` that counts",
        "passed": "",
    }[cover.state]
    missing = f"promise {cover.index} has no passing scenario: {why}"
    return Blocker("functional", "promise-uncovered", cover.promise.scenario, missing)


def _functional(
    items: Sequence[Issue], labels: GateLabels, facts: Facts, cover: tuple[Coverage, ...] | None = None
) -> list[Blocker]:
    out: list[Blocker] = []
    if cover is not None:
        # A promise list: each promise needs its passing scenario (an empty list promises nothing: the
        # milestone's other scenarios, if any, must still pass).
        out += [_uncovered(c, labels) for c in cover if not c.covered]
    scenarios = [item for item in items if item.has_label(labels.fieldtest)]
    if not scenarios and cover is None:
        missing = f"no field-test scenario: label at least one issue `{labels.fieldtest}`"
        out.append(Blocker("functional", "no-scenario", None, missing))
    for item in scenarios:
        if item.state == "open":
            missing = f"scenario still open: run it, then close it with `{labels.fieldtest_pass}`"
            out.append(Blocker("functional", "scenario-open", item.number, missing))
        elif not facts.has(item, labels.fieldtest_pass):
            missing = f"scenario closed without `{labels.fieldtest_pass}`"
            missing += facts.aside(item, labels.fieldtest_pass)
            out.append(Blocker("functional", "scenario-not-passed", item.number, missing))
    for item in items:
        if item.state == "open" and item.has_label(labels.finding_bug):
            missing = f"open `{labels.finding_bug}`: fix it and close it"
            out.append(Blocker("functional", "bug-open", item.number, missing))
    for item in items:
        if item.state == "open" and is_finding(item, labels) and not facts.has(item, labels.ratified):
            missing = (
                "open finding: close it, or accept it as it is with `ratify <reason>` "
                f"(it labels it `{labels.ratified}`)"
            )
            missing += facts.aside(item, labels.ratified)
            out.append(Blocker("functional", "finding-open", item.number, missing))
    return out


def evaluate(
    items: Iterable[Issue],
    *,
    description: str,
    labels: GateLabels,
    internal_marker: str,
    facts: Facts = NO_FACTS,
    exempt: bool | None = None,
    promises: Sequence[Promised] | None = None,
) -> GateResult:
    """The gate over a milestone's items (issues and pull requests, the dashboard already left out).
    ``facts``: which passing labels do not count and which items have an unresolved fork; Steward's own
    callers always pass them (``handlers.milestones.gate_facts``). Without them every label counts as it is
    and no item has an unresolved fork. ``promises``: the milestone's promise list (None: it has none, and the
    functional leg asks for at least one passing scenario); each promise needs its scenario to pass."""
    ordered = sorted(items, key=lambda item: item.number)
    if exempt is None:  # Steward's own callers say (a `/gate internal` record that holds); the line alone
        exempt = is_internal(description, internal_marker)
    cover = coverage(promises, ordered, labels, facts) if promises is not None else None
    functional = () if exempt else tuple(_functional(ordered, labels, facts, cover))
    return GateResult(tuple(_complete(ordered, labels, facts)), functional, exempt, cover)

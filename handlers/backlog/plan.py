"""The pure rules of backlog refinement: what the forge holds for one issue (``Thread``) in, the state to
write (``Plan``) out, for each step of the interview (``plan_start`` … ``plan_approve``). No I/O here; the
effects are in :mod:`handlers.backlog.effects` and the commands in :mod:`handlers.backlog.bot`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from bot.commands.context import CommandError
from bot.config.settings import BacklogSettings
from bot.forge import Comment, Issue
from bot.records import sticky
from handlers.backlog import interview as iv
from handlers.backlog.command_hints import Hints
from handlers.backlog.gaps import scan
from handlers.backlog.level import score
from handlers.backlog.spec import SpecRecord, synthesize

__all__ = [
    "DEFAULT_HINTS",
    "LEVELS",
    "Plan",
    "Thread",
    "level_label",
    "none_running",
    "not_interviewing",
    "plan_answers",
    "plan_approve",
    "plan_cancel",
    "plan_edit",
    "plan_enough",
    "plan_start",
]

LEVELS: Final = ("L1", "L2", "L3")
DEFAULT_HINTS: Final = Hints()


@dataclass(frozen=True)
class Thread:
    """What the forge holds for one issue: the issue and the two sticky comments (decoded)."""

    issue: Issue
    comments: list[Comment]
    interview: iv.Interview | None = None
    spec: SpecRecord = field(default_factory=SpecRecord)
    interview_body: str | None = None
    spec_body: str | None = None
    # Records whose data block did not verify (ignored above; reported once they are rewritten).
    broken: tuple[tuple[str, sticky.Record], ...] = ()

    @property
    def fingerprint(self) -> tuple[str | None, str | None]:
        return self.interview_body, self.spec_body


@dataclass(frozen=True)
class Plan:
    """The desired state: None leaves a comment as it is."""

    interview: iv.Interview | None = None
    spec: SpecRecord | None = None
    add_labels: tuple[str, ...] = ()
    remove_labels: tuple[str, ...] = ()
    reply: str | None = None
    # The issue's new title (seed 002's "patch only what changed": the approval applies the interview's).
    title: str | None = None


def level_label(labels: Sequence[str], prefix: str) -> tuple[str, str] | None:
    """The issue's ``level:*`` label and its level (``("level:L2", "L2")``), if it has one."""
    for label in labels:
        if label.casefold().startswith(prefix.casefold()):
            value = label[len(prefix) :].strip().upper()
            if value in LEVELS:
                return label, value
    return None


def _with_deps(interview: iv.Interview, deps: Sequence[iv.DepRecord]) -> iv.Interview:
    known = {d.number for d in interview.deps}
    new = tuple(d for d in deps if d.number not in known)
    return interview.model_copy(update={"deps": (*interview.deps, *new)}) if new else interview


def _draft(thread: Thread, interview: iv.Interview) -> SpecRecord:
    """The spec record with a draft for ``interview``'s stop; the same stop re-run gives the same draft."""
    origin = f"c{interview.cycle}r{interview.round}:{interview.gate}"
    record = thread.spec
    if record.current is not None and record.current.origin == origin:
        return record
    issue = thread.issue
    spec = synthesize(
        title=issue.title,
        body=issue.body,
        found=scan(issue.title, issue.body),
        ledger=interview.ledger,
        verdict=interview.gate or "STOP-CLEAN",
        version=record.last_version + 1,
        origin=origin,
    )
    level = score(spec.effective_title, spec.goal, spec.requirements)
    spec = spec.model_copy(
        update={
            "level": level.level,
            "level_reasons": level.reasons,
            "blocked_by": tuple(
                d.number for d in interview.deps if d.state in ("declared", "listed", "linked")
            ),
        }
    )
    return record.with_new(spec)


def _handled(thread: Thread, key: str | None) -> bool:
    return key is not None and thread.interview is not None and key in thread.interview.handled


def _mark(interview: iv.Interview, key: str | None) -> iv.Interview:
    return interview.with_handled(key) if key is not None else interview


def plan_start(
    thread: Thread,
    cfg: BacklogSettings,
    *,
    key: str | None = None,
    by_command: bool = False,
    deps: Sequence[iv.DepRecord] = (),
) -> Plan:
    """Start (label or ``/refine``), or restart a cancelled or — by ``/refine`` — an approved refinement."""
    if _handled(thread, key):
        return Plan()
    issue = thread.issue
    labels = () if issue.has_label(cfg.refine_label) or not by_command else (cfg.refine_label,)
    current = thread.interview
    if current is None:
        interview, gate = iv.start(issue.title, issue.body, cap=cfg.round_cap, limit=cfg.max_questions)
        interview = _mark(_with_deps(interview, deps), key)
        spec = _draft(thread, interview) if gate is not None else None
        return Plan(interview=interview, spec=spec, add_labels=labels)
    if current.status == "cancelled" or (current.status == "approved" and by_command):
        interview = iv.reopen(current, title=issue.title, body=issue.body, limit=cfg.max_questions)
        return Plan(interview=_mark(_with_deps(interview, deps), key), add_labels=labels)
    if not by_command:
        return Plan()
    what = "an interview is running" if current.status == "interviewing" else "a spec draft awaits approval"
    return Plan(
        interview=_mark(current, key),
        reply=f"Backlog refinement is already under way here ({what}); see the interview comment.",
    )


def none_running(hints: Hints) -> CommandError:
    return CommandError(f"no backlog refinement is running on this issue; {hints.run('refine')} starts one.")


def plan_answers(
    thread: Thread,
    answers: Sequence[iv.Answer],
    cfg: BacklogSettings,
    *,
    deps: Sequence[iv.DepRecord] = (),
    hints: Hints = DEFAULT_HINTS,
) -> Plan:
    current = thread.interview
    if current is None:
        raise none_running(hints)
    if all(a.key in current.applied for a in answers):
        return Plan()
    if current.status != "interviewing":
        raise CommandError(not_interviewing(current, hints))
    issue = thread.issue
    interview, gate = iv.record_answers(
        current, answers, title=issue.title, body=issue.body, cap=cfg.round_cap, limit=cfg.max_questions
    )
    interview = _with_deps(interview, deps)
    spec = _draft(thread, interview) if iv.gate_stops(gate) else None
    return Plan(interview=interview, spec=spec)


def not_interviewing(current: iv.Interview, hints: Hints = DEFAULT_HINTS) -> str:
    if current.status == "stopped":
        return (
            f"the interview has ended and a spec draft awaits approval; {hints.run('edit-spec')} reopens it."
        )
    if current.status == "approved":
        return f"this refinement is approved and locked; {hints.new_version()} starts a new version."
    return f"this refinement was cancelled; {hints.run('refine')} starts it again."


def plan_enough(thread: Thread, cfg: BacklogSettings, *, key: str, hints: Hints = DEFAULT_HINTS) -> Plan:
    current = thread.interview
    if _handled(thread, key):
        return Plan()
    if current is None:
        raise none_running(hints)
    if current.status != "interviewing":
        raise CommandError(not_interviewing(current, hints))
    interview, _ = iv.enough(current, cap=cfg.round_cap)
    interview = interview.with_handled(key)
    return Plan(interview=interview, spec=_draft(thread, interview))


def plan_edit(
    thread: Thread, cfg: BacklogSettings, *, key: str, actor: str = "", hints: Hints = DEFAULT_HINTS
) -> Plan:
    current = thread.interview
    if _handled(thread, key):
        return Plan()
    if current is None or thread.spec.current is None:
        raise CommandError(f"there is no spec draft to edit; {hints.run('refine')} starts a refinement.")
    if current.status == "interviewing":
        raise CommandError(
            "the interview is already open: answer the questions, or "
            f"{hints.cmd('enough')} to draft the spec."
        )
    if current.status != "stopped":
        raise CommandError(not_interviewing(current, hints))
    issue = thread.issue
    interview = iv.reopen(current, title=issue.title, body=issue.body, limit=cfg.max_questions)
    # The draft stays current until the next one; its history entry will say it was edited, and by whom.
    spec = thread.spec.current
    note = f"edited: @{actor} reopened the interview (`/{hints.prefix} edit-spec`)" if actor else "edited"
    record = thread.spec.model_copy(update={"current": spec.model_copy(update={"note": note})})
    return Plan(interview=interview.with_handled(key), spec=record)


def plan_cancel(
    thread: Thread, cfg: BacklogSettings, *, key: str, actor: str = "", hints: Hints = DEFAULT_HINTS
) -> Plan:
    current = thread.interview
    if _handled(thread, key):
        return Plan()
    if current is None or current.status == "cancelled":
        raise CommandError("there is no refinement to cancel here.")
    if current.status == "approved":
        raise CommandError("this refinement is approved and locked; there is no draft to discard.")
    interview = current.model_copy(update={"status": "cancelled", "asking": ()}).with_handled(key)
    return Plan(
        interview=interview,
        spec=thread.spec.discard(
            f"cancelled: @{actor} discarded the draft (`/{hints.prefix} cancel-refine`)"
            if actor
            else "cancelled"
        ),
        remove_labels=(cfg.refine_label,) if thread.issue.has_label(cfg.refine_label) else (),
    )


def plan_approve(
    thread: Thread,
    cfg: BacklogSettings,
    *,
    key: str,
    actor: str,
    choice: str | None,
    hints: Hints = DEFAULT_HINTS,
) -> Plan:
    prefix = hints.prefix
    current = thread.interview
    if _handled(thread, key):
        return Plan()
    spec = thread.spec.current
    if current is None or spec is None:
        raise CommandError(f"there is no spec to approve yet; {hints.run('refine')} starts a refinement.")
    if current.status == "interviewing":
        raise CommandError(
            f"the interview is still open: {hints.run('enough')} ends it and drafts the spec to approve."
        )
    if current.status != "stopped" or spec.status != "draft":
        raise CommandError(not_interviewing(current, hints))
    issue = thread.issue
    have = level_label(issue.labels, cfg.level_label_prefix)
    wanted = (choice or "").strip()
    if wanted and wanted.lower() not in ("apply", "keep") and wanted.upper() not in LEVELS:
        raise CommandError(
            f"`{wanted}` is not a level choice: use `/{prefix} approve-spec`, "
            f"`/{prefix} approve-spec apply`, `/{prefix} approve-spec keep` or "
            f"`/{prefix} approve-spec L1|L2|L3`."
        )
    if not wanted and have is not None and have[1] != spec.level:
        raise CommandError(
            f"the spec scores **{spec.level}** but the issue is labelled `{have[0]}`. Choose: "
            f"`/{prefix} approve-spec apply` (set `{cfg.level_label_prefix}{spec.level}`), "
            f"`/{prefix} approve-spec keep` (keep `{have[0]}`) or `/{prefix} approve-spec L1|L2|L3`. "
            "The level never changes without that answer."
        )
    target: str | None = None
    if wanted.lower() == "apply" or (not wanted and have is None):
        # Without a level label the interview's level is applied (seed 002: the approval patches what
        # changed); a label that differs is changed only by the approver's answer (above).
        target = spec.level
    elif wanted.upper() in LEVELS:
        target = wanted.upper()
    add = [cfg.approved_label]
    remove = [cfg.refine_label] if issue.has_label(cfg.refine_label) else []
    if target is not None and (have is None or have[1] != target):
        add.append(f"{cfg.level_label_prefix}{target}")
        if have is not None:
            remove.append(have[0])
        decision = f"set to `{cfg.level_label_prefix}{target}`"
    elif have is not None:
        decision = f"kept `{have[0]}`"
    else:
        decision = "no level label set"
    title: str | None = None
    title_decision: str | None = None
    if spec.new_title and spec.new_title != issue.title:
        title = spec.new_title
        title_decision = f"changed from “{issue.title}” to “{title}”"
    approved = spec.model_copy(
        update={
            "status": "approved",
            "approved_by": actor,
            "level_decision": decision,
            "title_decision": title_decision,
        }
    )
    record = thread.spec.model_copy(update={"current": approved})
    interview = current.model_copy(update={"status": "approved"}).with_handled(key)
    return Plan(
        interview=interview, spec=record, add_labels=tuple(add), remove_labels=tuple(remove), title=title
    )

"""The pure rules around a bug's verdict in the forge: the bug's id, the digest of its body, the stories it
lists and which of them to refine, and the labels that mirror a verdict. Pure: no I/O."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.config.settings import BugRefinementSettings
from bot.forge import Issue, RepoRef
from handlers.bug_refinement.render import (
    StoryNote,
)

_STORY_REF = re.compile(r"^[ \t]*[-*+][ \t]+\[[ xX]\][ \t]+#(\d+)\b", re.MULTILINE)
_STORIES_HEADING = re.compile(r"^ {0,3}##[ \t]+(?:stories|histórias|historias)[ \t]*#*[ \t]*$", re.I | re.M)
_NEXT_HEADING = re.compile(r"^ {0,3}#{1,2}[ \t]+\S", re.M)


def bug_id_of(repo: RepoRef, number: int) -> str:
    return f"{repo.full_name}#{number}"


def body_digest(body: str) -> str:
    return hashlib.sha256(body.replace("\r\n", "\n").strip().encode()).hexdigest()[:16]


def in_repo(issue: Issue, repo: RepoRef) -> bool:
    """Whether ``issue``, as a sub-issue listing gives it, is in ``repo``: GitHub lets a sub-issue be in
    another repository of the same owner ("must belong to the same repository owner as the parent issue":
    `sub_issue_id` in tests/fixtures/github/openapi-2026-subset.json), and its page says which
    (``…/owner/name/issues/N``). Its number means another issue here, so it is no story of a bug here. One
    whose page is not given counts as here."""
    if not issue.html_url:
        return True
    return issue.html_url.casefold().endswith(f"/{repo.full_name}/issues/{issue.number}".casefold())


def story_numbers(body: str) -> list[int]:
    """Issues linked from a ``## Stories`` task list (``- [ ] #124``), in order, without repeats."""
    heading = _STORIES_HEADING.search(body or "")
    if heading is None:
        return []
    rest = body[heading.end() :]
    following = _NEXT_HEADING.search(rest)
    section = rest[: following.start()] if following else rest
    seen: list[int] = []
    for match in _STORY_REF.finditer(section):
        number = int(match.group(1))
        if number not in seen:
            seen.append(number)
    return seen


def select_stories(
    bug: Issue,
    sub_issues: Sequence[Issue],
    listed: Sequence[int],
    found: Mapping[int, Issue | None],
    *,
    limit: int,
) -> tuple[list[Issue], list[StoryNote]]:
    """Which issues to refine as stories of ``bug``, and which to skip and why (DESIGN §3.9: trust follows
    the person). A sub-issue was put there by someone allowed to; an issue the body's ``## Stories`` list
    names counts only when the bug's author opened it, so an outsider's bug cannot make Steward comment on
    and label a maintainer's issues. Pull requests are never stories. At most ``limit`` are refined.

    ``found`` holds each listed issue read from the forge (None: it does not exist); a listed number past
    the limit need not have been read."""
    chosen: list[Issue] = []
    skipped: list[StoryNote] = []
    subs = {issue.number for issue in sub_issues}
    candidates: list[tuple[int, Issue | None]] = [(issue.number, issue) for issue in sub_issues]
    candidates += [(n, found.get(n)) for n in listed if n not in subs and n != bug.number]
    for number, story in candidates:
        if len(chosen) >= limit:
            skipped.append(
                StoryNote(number, skipped=f"the bug already has {limit} stories, the most I refine")
            )
        elif story is None:
            skipped.append(StoryNote(number, skipped="there is no such issue in this repository"))
        elif story.is_pull_request:
            skipped.append(StoryNote(number, skipped="it is a pull request, not an issue"))
        elif number not in subs and story.author.casefold() != bug.author.casefold():
            skipped.append(StoryNote(number, skipped="it is not a sub-issue and was opened by someone else"))
        else:
            chosen.append(story)
    return chosen, skipped


@dataclass(frozen=True)
class LabelPlan:
    add: tuple[str, ...]
    remove: tuple[str, ...]


def label_plan(current: tuple[str, ...], verdict: str, settings: BugRefinementSettings) -> LabelPlan:
    """Exactly one ``refinement:*`` label, the one for ``verdict`` (a visible state, see
    ``effects.visible_state``)."""
    wanted = settings.label_for(verdict)
    folded = {label.casefold() for label in current}
    others = [
        label
        for label in current
        if label.casefold() in {name.casefold() for name in settings.verdict_labels()}
        and label.casefold() != wanted.casefold()
    ]
    return LabelPlan(add=() if wanted.casefold() in folded else (wanted,), remove=tuple(others))

"""Issue search, forge-neutral: the index (and its lag) and GitHub's query language.

Both forges search an index that follows the issues with a delay: a new issue, or a changed one, is found
as it is only once the index has caught up ("the search index does not have the PR that was just merged",
behaviorbot/first-pr-merge#11; minutes for a fresh label, guettli/agentloop#204; Gitea's issue indexer is
fed by a queue, and is skipped for a search without keywords — modules/indexer/issues/indexer.go
`SearchIssues`: "if the keyword is empty, db has better … performance"). The sandbox indexes an issue once
it has been left unchanged for ``Sandbox.search_lag`` seconds (its `updated_at` has whole seconds, so the
lag is between that less one and that), and matches a query against what the index holds.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from .state import Issue, Repo, SandboxState


@dataclass(frozen=True)
class Indexed:
    """What the index knows of an issue: its searchable fields as they were when it was indexed."""

    repo: str
    number: int
    is_pull: bool
    state: str
    locked: bool
    title: str
    body: str
    comments: str
    author: str
    assignees: tuple[str, ...]
    labels: tuple[str, ...]
    milestone: str | None
    created_at: str
    updated_at: str
    closed_at: str | None


def snapshot(repo: Repo, issue: Issue) -> Indexed:
    milestone = repo.milestones.get(issue.milestone) if issue.milestone is not None else None
    return Indexed(
        repo=repo.full_name.casefold(),
        number=issue.number,
        is_pull=issue.pull is not None,
        state=issue.state,
        locked=issue.locked,
        title=issue.title,
        body=issue.body or "",
        comments="\n".join(c.body for c in repo.comments.values() if c.issue_number == issue.number),
        author=issue.user.casefold(),
        assignees=tuple(a.casefold() for a in issue.assignees),
        labels=tuple(repo.labels[i].name.casefold() for i in issue.label_ids if i in repo.labels),
        milestone=milestone.title.casefold() if milestone is not None else None,
        created_at=issue.created_at,
        updated_at=issue.updated_at,
        closed_at=issue.closed_at,
    )


def refresh(index: dict[int, Indexed], repos: list[Repo], lag: float, now: datetime | None = None) -> None:
    """Bring `index` up to date with every issue of `repos` that has been quiet for `lag` seconds; a
    repository that is renamed keeps its issues' entries (they name the repository as it is now)."""
    settled = ((now or datetime.now(UTC)) - timedelta(seconds=lag)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for repo in repos:
        for issue in repo.issues.values():
            entry = index.get(issue.id)
            if issue.updated_at <= settled and (entry is None or entry.updated_at != issue.updated_at):
                index[issue.id] = snapshot(repo, issue)
            elif entry is not None and entry.repo != repo.full_name.casefold():
                index[issue.id] = replace(entry, repo=repo.full_name.casefold())


# GitHub's query ------------------------------------------------------------------------------------------

Predicate = Callable[[Indexed], bool]
_DATE = re.compile(
    r"^(>=|<=|>|<)?(\d{4}-\d{2}-\d{2}(?:T[\d:]+Z?)?)(?:\.\.(\d{4}-\d{2}-\d{2}(?:T[\d:]+Z?)?|\*))?$"
)


class QueryError(ValueError):
    """A query GitHub refuses (422 Validation Failed, "The search query is invalid" style)."""


def _dates(value: str, field: Callable[[Indexed], str | None]) -> Predicate:
    found = _DATE.match(value)
    if found is None:
        raise QueryError(f"invalid date {value!r}")
    op, first, upto = found.groups()

    def ok(item: Indexed) -> bool:
        have = field(item)
        if have is None:
            return False

        def cut(bound: str) -> str:
            """`have` to the precision of `bound`: a day, or a time."""
            return have if "T" in bound else have[:10]

        if upto is not None:
            return cut(first) >= first and (upto == "*" or cut(upto) <= upto)
        day = cut(first)
        return {
            None: day == first,
            ">": day > first,
            ">=": day >= first,
            "<": day < first,
            "<=": day <= first,
        }[op]

    return ok


def _qualifier(key: str, value: str, text_fields: list[str]) -> Predicate | None:
    """The test a qualifier makes (None: `in:`, which chooses where free text is looked for)."""
    low = value.casefold()
    if key == "repo":
        return lambda i: i.repo == low
    if key in ("user", "org", "owner"):
        return lambda i: i.repo.split("/", 1)[0] == low
    if key in ("is", "type"):
        kinds: dict[str, Predicate] = {
            "issue": lambda i: not i.is_pull,
            "pr": lambda i: i.is_pull,
            "pull-request": lambda i: i.is_pull,
            "open": lambda i: i.state == "open",
            "closed": lambda i: i.state == "closed",
            "locked": lambda i: i.locked,
            "unlocked": lambda i: not i.locked,
        }
        if low not in kinds:
            raise QueryError(f"unknown {key}:{value}")
        return kinds[low]
    if key == "state":
        return lambda i: i.state == low
    if key == "label":
        wanted = {v.strip() for v in low.split(",") if v.strip()}
        return lambda i: bool(wanted & set(i.labels))
    if key == "no":
        nothing: dict[str, Predicate] = {
            "label": lambda i: not i.labels,
            "milestone": lambda i: i.milestone is None,
            "assignee": lambda i: not i.assignees,
        }
        if low not in nothing:
            raise QueryError(f"unknown no:{value}")
        return nothing[low]
    if key == "author":
        return lambda i: i.author == low
    if key == "assignee":
        return lambda i: low in i.assignees
    if key == "milestone":
        return lambda i: i.milestone == low
    if key in ("created", "updated", "closed"):
        field: Callable[[Indexed], str | None] = {
            "created": lambda i: i.created_at,
            "updated": lambda i: i.updated_at,
            "closed": lambda i: i.closed_at,
        }[key]
        return _dates(value, field)
    if key == "in":
        text_fields[:] = [f for f in low.split(",") if f in ("title", "body", "comments")]
        return None
    raise QueryError(f"unknown qualifier {key}")


def _tokens(query: str) -> list[str]:
    spaced = re.sub(r"([()])", r" \1 ", query)
    try:
        return shlex.split(spaced, posix=True)
    except ValueError:
        raise QueryError("unbalanced quotes") from None


_QUALIFIED = re.compile(r"^(-?)([a-z-]+):(.+)$")


@dataclass
class Query:
    """A parsed `q`: `test` says whether an indexed issue matches (free words are looked for in
    `text_fields`: title, body and comments unless `in:` says otherwise)."""

    test: Predicate
    text_fields: list[str]


def parse(query: str, *, advanced: bool) -> Query:
    """GitHub's query: qualifiers and words, all of which must hold. With `advanced` (GitHub's
    `advanced_search=true`, the syntax that replaces the legacy one) `AND`, `OR` and parentheses combine
    them; the legacy syntax reads those as words."""
    text_fields = ["title", "body", "comments"]
    tokens = _tokens(query)
    words: list[str] = []

    def atom(token: str) -> Predicate:
        found = _QUALIFIED.match(token)
        if found is not None:
            negate, key, value = found.groups()
            test = _qualifier(key, value, text_fields)
            if test is None:
                return lambda i: True
            return (lambda i: not test(i)) if negate else test
        word = token.casefold()
        words.append(word)
        return lambda i: any(word in getattr(i, f).casefold() for f in text_fields)

    if not advanced:
        tests = [atom(t) for t in tokens if t not in ("(", ")")]
        return Query(lambda i: all(t(i) for t in tests), text_fields)
    stream = iter([*tokens, ""])
    pending = [next(stream)]

    def peek() -> str:
        return pending[0]

    def take() -> str:
        token = pending[0]
        pending[0] = next(stream, "")
        return token

    def expression(depth: int) -> Predicate:
        if depth > 5:
            raise QueryError("too many levels of parentheses")
        alternatives = [conjunction(depth)]
        while peek() == "OR":
            take()
            alternatives.append(conjunction(depth))
        return lambda i: any(a(i) for a in alternatives)

    def conjunction(depth: int) -> Predicate:
        parts = [factor(depth)]
        while peek() not in ("", ")", "OR"):
            if peek() == "AND":
                take()
            parts.append(factor(depth))
        return lambda i: all(p(i) for p in parts)

    def factor(depth: int) -> Predicate:
        token = take()
        if token == "(":
            inner = expression(depth + 1)
            if take() != ")":
                raise QueryError("unbalanced parentheses")
            return inner
        if token in ("", ")", "AND", "OR"):
            raise QueryError(f"unexpected {token or 'end of query'}")
        return atom(token)

    test = expression(0) if tokens else (lambda i: True)
    if peek() != "":
        raise QueryError("unbalanced parentheses")
    return Query(test, text_fields)


def matches(
    index: dict[int, Indexed], forge: SandboxState, repos: list[Repo], test: Predicate
) -> Iterator[tuple[Repo, Issue]]:
    """The issues of `repos` whose indexed form passes `test` (as the issue is now)."""
    for repo in repos:
        for issue in repo.issues.values():
            entry = index.get(issue.id)
            if entry is not None and test(entry):
                yield repo, issue


def keyword_test(keyword: str) -> Predicate:
    """Gitea's keyword search: every word in the title, content or comments (bleve's match)."""
    words = [w.casefold() for w in keyword.split() if w]
    return lambda i: all(any(w in t.casefold() for t in (i.title, i.body, i.comments)) for w in words)


def readable(forge: SandboxState, login: str | None, flavor: str | None = None) -> list[Repo]:
    """The repositories `login` may read (of one flavour, when given)."""
    return [
        r
        for r in forge.repos.values()
        if forge.can(r, login, "pull") and (flavor is None or r.flavor == flavor)
    ]

"""Forge requests per event, counted in the sandbox's request log (issue 28, item 3): a new RA9 verdict
writes the verdict and the label change (add one, take one off) — on a rejection the verdict itself
mentions the reporter, so no separate notice; an unchanged one writes nothing; labels Steward ensured are
not read again; a label a person deleted is recreated as it was. Counts, not times. Both forges."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Steward

DATA = Path(__file__).resolve().parent / "data"
REJECTED = (DATA / "bug-rejected.md").read_text()


def _short(steward: Steward, repo: str) -> list[tuple[str, str, int | None]]:
    """The bot's requests on ``repo``: method, path below the repository, status."""
    out = []
    for r in steward.bot_requests(repo):
        path = r["path"].split(f"/repos/{repo}", 1)[1]
        out.append((r["method"], path, r["status"]))
    return out


def _event(steward: Steward, repo: str, act: Any) -> list[tuple[str, str, int | None]]:
    steward.settle()
    steward.clear_requests()
    act()
    steward.settle()
    return _short(steward, repo)


def _writes(requests: list[tuple[str, str, int | None]]) -> list[tuple[str, str]]:
    """The writes, sorted, a comment's id shown as ``{id}``."""
    return sorted(
        (m, re.sub(r"^/issues/comments/\d+$", "/issues/comments/{id}", p))
        for m, p, _ in requests
        if m not in ("GET", "HEAD")
    )


def _label_reads(requests: list[tuple[str, str, int | None]]) -> list[tuple[str, str]]:
    return [(m, p) for m, p, _ in requests if m == "GET" and p.startswith("/labels")]


def _refined_once(steward: Steward, repo: str) -> None:
    """A first bug refined on ``repo``: Steward has ensured the pending and rejected labels."""
    first = steward.maintainer.open_issue(repo, "Login fails", REJECTED, labels=["bug"])
    steward.settle()
    steward.maintainer.add_labels(repo, first, ["refine"])
    steward.settle()


def test_a_new_verdict_writes_the_verdict_and_the_label_change_and_reads_no_label(
    steward: Steward,
) -> None:
    repo = steward.new_repo()
    m = steward.maintainer
    _refined_once(steward, repo)
    bug: list[int] = []
    opened = _event(
        steward, repo, lambda: bug.append(m.open_issue(repo, "Login fails", REJECTED, labels=["bug"]))
    )
    n = bug[0]
    # A new bug: read it, stamp it pending — one write, and the label is not looked up again.
    assert _writes(opened) == [("POST", f"/issues/{n}/labels")], opened
    assert _label_reads(opened) == [], opened
    refined = _event(steward, repo, lambda: m.add_labels(repo, n, ["refine"]))
    pending = "refinement:pending"
    if steward.forge == "gitea":  # Gitea takes a label off by its id
        pending = str(
            next(lb["id"] for lb in m.call("GET", f"/repos/{repo}/labels") if lb["name"] == pending)
        )
    # The verdict, the rejected label on, the pending label off (the issue carries it: stamped when opened) —
    # and one edit: a new comment that keeps a record is created, then its signed record is written in (the
    # signature covers the comment's id, which the forge gives only on creation; docs/integrity.md). No
    # separate notice: the new verdict's first line mentions the reporter, and a new comment notifies.
    assert _writes(refined) == [
        ("DELETE", f"/issues/{n}/labels/{pending}"),
        ("PATCH", "/issues/comments/{id}"),
        ("POST", f"/issues/{n}/comments"),
        ("POST", f"/issues/{n}/labels"),
    ], refined
    assert _label_reads(refined) == [], refined
    assert m.labels_of(repo, n) == ["bug", "refine", "refinement:needs-info"]
    [verdict] = [c["body"] for c in steward.bot_comments(repo, n)]
    assert "\n@maintainer: thank you for the report — " in verdict, "the reporter is asked in the verdict"
    # Nothing changed: nothing written.
    edited = _event(steward, repo, lambda: m.edit_issue(repo, n, title="Login fails!"))
    assert _writes(edited) == [], edited


def test_a_bug_opened_with_its_labels_writes_the_verdict_and_one_label(steward: Steward) -> None:
    """Opened already labelled ``refine``: never stamped pending, so there is no label to take off — the
    remove is planned only for a verdict label the issue carries as read (``label_plan``). Three writes: the
    verdict created, its record signed in, the rejected label on; the reporter is asked in the verdict."""
    repo = steward.new_repo()
    m = steward.maintainer
    _refined_once(steward, repo)
    bug: list[int] = []
    opened = _event(
        steward,
        repo,
        lambda: bug.append(m.open_issue(repo, "Login fails", REJECTED, labels=["bug", "refine"])),
    )
    n = bug[0]
    assert _writes(opened) == [
        ("PATCH", "/issues/comments/{id}"),
        ("POST", f"/issues/{n}/comments"),
        ("POST", f"/issues/{n}/labels"),
    ], opened
    assert _label_reads(opened) == [], opened
    assert m.labels_of(repo, n) == ["bug", "refine", "refinement:needs-info"]
    [verdict] = [c["body"] for c in steward.bot_comments(repo, n)]
    assert "\n@maintainer: thank you for the report — " in verdict


def _repo_label(steward: Steward, repo: str, name: str) -> dict[str, Any] | None:
    labels = steward.maintainer.call("GET", f"/repos/{repo}/labels")
    return next((lb for lb in labels if lb["name"] == name), None)


def test_a_label_deleted_by_a_person_is_recreated_as_it_was(steward: Steward) -> None:
    repo = steward.new_repo()
    m = steward.maintainer
    _refined_once(steward, repo)
    rejected = _repo_label(steward, repo, "refinement:needs-info")
    assert rejected is not None
    which = rejected["id"] if steward.forge == "gitea" else "refinement:needs-info"
    m.call("DELETE", f"/repos/{repo}/labels/{which}")
    assert _repo_label(steward, repo, "refinement:needs-info") is None
    n = m.open_issue(repo, "Login fails again", REJECTED, labels=["bug"])
    steward.settle()
    m.add_labels(repo, n, ["refine"])
    steward.settle()
    assert m.labels_of(repo, n) == ["bug", "refine", "refinement:needs-info"]
    again = _repo_label(steward, repo, "refinement:needs-info")
    assert again is not None
    assert again["color"].lstrip("#").lower() == rejected["color"].lstrip("#").lower() == "d4c5f9"
    assert again["description"] == rejected["description"]
    assert "waiting for the reporter" in again["description"]

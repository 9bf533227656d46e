"""Pins, the rules without I/O: GitHub's GraphQL errors as the port's errors, and a refused pin said once."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import structlog

from bot.catchup.dry_run import DryRunForge
from bot.forge import (
    ForgeError,
    NotFound,
    NotSupported,
    PermissionDenied,
    RateLimited,
    RepoRef,
    ValidationFailed,
    pins,
)
from bot.forge.github_pins import FULL
from bot.forge.github_transport import graphql_error
from bot.forge.pins import GITHUB_FULL, not_pinned


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ({"type": "NOT_FOUND", "message": "Could not resolve to a node"}, NotFound),
        ({"type": "FORBIDDEN", "message": "Resource not accessible by integration"}, PermissionDenied),
        ({"type": "UNPROCESSABLE", "message": "Maximum 3 pinned issues per repository"}, ValidationFailed),
        ({"type": "RATE_LIMITED", "message": "API rate limit exceeded"}, RateLimited),
        ({"extensions": {"code": "undefinedField"}, "message": "Field 'pinIssue' is unknown"}, NotSupported),
        ({"message": "Something went wrong"}, ForgeError),
    ],
)
def test_graphql_errors_become_the_ports_errors(error: dict[str, Any], expected: type[ForgeError]) -> None:
    found = graphql_error([error], "pin o/r#1")
    assert type(found) is expected
    assert str(found) == f"pin o/r#1: {error['message']}", "GitHub's words are kept"


@pytest.mark.parametrize("errors", [[], None, "x", [1], [{}]])
def test_a_malformed_errors_array_is_still_an_error(errors: Any) -> None:
    assert isinstance(graphql_error(errors, "pin o/r#1"), ForgeError)


def test_githubs_full_refusal_is_recognised() -> None:
    assert FULL.search("pin o/r#4: Maximum 3 pinned issues per repository")
    assert not FULL.search("pin o/r#4: The issue is already pinned or could not be pinned at this time")


def test_a_refused_pin_is_said_once_per_repository_and_reason() -> None:
    pins._said.clear()
    with structlog.testing.capture_logs() as logged:
        for number in (1, 2, 3):
            assert not_pinned("github", RepoRef("said", "once"), number, GITHUB_FULL) is False
        assert not_pinned("github", RepoRef("said", "other"), 1, GITHUB_FULL) is False
        assert not_pinned("gitea", RepoRef("said", "once"), 1, GITHUB_FULL) is False
    said = [(e["forge"], e["repo"], e["issue"]) for e in logged if e["event"] == "issue not pinned"]
    assert said == [("github", "said/once", 1), ("github", "said/other", 1), ("gitea", "said/once", 1)]
    assert all(e["log_level"] == "warning" and e["reason"] == GITHUB_FULL for e in logged)


async def test_a_dry_run_describes_a_pin_and_makes_none() -> None:
    """``steward reconcile --dry-run``: a pin is a write — described, not made, answered True."""
    said: list[str] = []
    inner = SimpleNamespace(kind="gitea")  # a dry run's writes never reach the forge
    dry = DryRunForge(inner, said.append)  # type: ignore[arg-type]
    assert await dry.pin_issue(RepoRef("o", "r"), 7) is True
    assert await dry.pin_issue(RepoRef("o", "r"), -1) is True
    await dry.unpin_issue(RepoRef("o", "r"), 7)
    assert said == [
        "would pin o/r#7 (unless it is pinned already)",
        "would pin the new issue on o/r (unless it is pinned already)",
        "would unpin o/r#7 (if it is pinned)",
    ]

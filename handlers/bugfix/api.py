"""What other capabilities ask of regression-first bugfixes: whether the forge requires the
`steward/regression-first` status where it matters, and how to say so (``/steward config`` and the
onboarding pull request); and a bug's regression test slot (section 7) and the test cases a file defines
(the hypotheses board offers CI failures of that test as symptoms)."""

from __future__ import annotations

from bot.forge.codeowners import GITEA_FILES, GITHUB_FILES
from handlers.bugfix.gate import bug_of_pull_title as bug_of_pull_title
from handlers.bugfix.record import EXHAUSTED_LABEL as EXHAUSTED_LABEL
from handlers.bugfix.record import LABELS as _LABELS
from handlers.bugfix.record import OPEN_LABEL as OPEN_LABEL
from handlers.bugfix.regression_slot import case_names as case_names
from handlers.bugfix.regression_slot import parse_slot as parse_slot
from handlers.bugfix.required_check import Requirement as Requirement
from handlers.bugfix.required_check import read_requirement as read_requirement
from handlers.bugfix.required_check import requirement as requirement
from handlers.bugfix.required_check import requirement_lines as requirement_lines
from handlers.bugfix.required_check import seen_contexts as seen_contexts
from handlers.bugfix.reviewers import Independence as Independence
from handlers.bugfix.reviewers import independence as independence

# The labels Steward sets and removes itself on bugs and bugfix pull requests (nobody sets them by hand).
MANAGED_LABELS: tuple[str, ...] = tuple(_LABELS)


def codeowners_files(kind: str) -> tuple[str, ...]:
    """Where each forge looks for CODEOWNERS, in its order (``bot.forge.codeowners``)."""
    return GITEA_FILES if kind == "gitea" else GITHUB_FILES

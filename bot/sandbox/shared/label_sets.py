"""The labels a new repository starts with, and what makes a label acceptable to each forge.

GitHub gives every new repository nine labels, marked ``default: true`` (an organisation may change its
own defaults; the sandbox's organisations keep GitHub's). Gitea gives none unless the repository is made
with a label set (``issue_labels`` in ``CreateRepoOption``), whose labels it then creates.
"""

from __future__ import annotations

import re

# (name, colour, description) — as GitHub answered `GET /repos/{o}/{r}/labels` on a new repository, recorded
# by octokit/fixtures (tests/fixtures/github/octokit-fixtures/labels.json; FORGE-FACTS "Default labels").
GITHUB_DEFAULTS: tuple[tuple[str, str, str], ...] = (
    ("bug", "d73a4a", "Something isn't working"),
    ("documentation", "0075ca", "Improvements or additions to documentation"),
    ("duplicate", "cfd3d7", "This issue or pull request already exists"),
    ("enhancement", "a2eeef", "New feature or request"),
    ("good first issue", "7057ff", "Good for newcomers"),
    ("help wanted", "008672", "Extra attention is needed"),
    ("invalid", "e4e669", "This doesn't seem right"),
    ("question", "d876e3", "Further information is requested"),
    ("wontfix", "ffffff", "This will not be worked on"),
)

# Gitea's label sets, go-gitea/gitea `options/label/Default` and `options/label/Advanced.yaml`: (name, colour,
# description, exclusive). A name Gitea has no file for is refused (``label.IsErrTemplateLoad``: 422).
GITEA_SETS: dict[str, tuple[tuple[str, str, str, bool], ...]] = {
    "Default": (
        ("bug", "ee0701", "Something is not working", False),
        ("duplicate", "cccccc", "This issue or pull request already exists", False),
        ("enhancement", "84b6eb", "New feature", False),
        ("help wanted", "128a0c", "Need some help", False),
        ("invalid", "e6e6e6", "Something is wrong", False),
        ("question", "cc317c", "More information is needed", False),
        ("wontfix", "ffffff", "This won't be fixed", False),
    ),
    "Advanced": (
        ("Kind/Bug", "ee0701", "Something is not working", False),
        ("Kind/Feature", "0288d1", "New functionality", False),
        ("Kind/Enhancement", "84b6eb", "Improve existing functionality", False),
        ("Kind/Security", "9c27b0", "This is security issue", False),
        ("Kind/Testing", "795548", "Issue or pull request related to testing", False),
        ("Kind/Breaking", "c62828", "Breaking change that won't be backward compatible", False),
        ("Kind/Documentation", "37474f", "Documentation changes", False),
        ("Reviewed/Duplicate", "616161", "This issue or pull request already exists", True),
        ("Reviewed/Invalid", "546e7a", "Invalid issue", True),
        ("Reviewed/Confirmed", "795548", "Issue has been confirmed", True),
        ("Reviewed/Won't Fix", "eeeeee", "This issue won't be fixed", True),
        (
            "Status/Need More Info",
            "424242",
            "Feedback is required to reproduce issue or to continue work",
            True,
        ),
        ("Status/Blocked", "880e4f", "Something is blocking this issue or pull request", True),
        ("Status/Abandoned", "222222", "Somebody has started to work on this but abandoned work", True),
        ("Priority/Critical", "b71c1c", "The priority is critical", True),
        ("Priority/High", "d32f2f", "The priority is high", True),
        ("Priority/Medium", "e64a19", "The priority is medium", True),
        ("Priority/Low", "4caf50", "The priority is low", True),
    ),
}

# GitHub's limits on a label (422 "Validation Failed" past them): a name of at most 50 characters (reported
# as `{"value", "resource": "Label", "field": "name", "code": "invalid"}`, semantic-release/github#518), a
# description of at most 100 (docs.github.com REST "Create a label"; e.g. EndBug/label-sync#260), a colour of
# six hexadecimal digits (octokit/fixtures `errors`: `{"resource": "Label", "code": "invalid", "field":
# "color"}`).
GITHUB_NAME_LIMIT = 50
GITHUB_DESCRIPTION_LIMIT = 100
_HEX6 = re.compile(r"[0-9a-fA-F]{6}")


def github_color(raw: object) -> str | None:
    """The colour GitHub stores for `raw`, as given (GitHub keeps its case: octokit/fixtures `labels` sets
    `BADA55` and reads `BADA55` back), or None when GitHub refuses it. A leading `#` is dropped: the
    sandbox is lenient there (GitHub's description asks for the code "without the leading #")."""
    if not isinstance(raw, str):
        return None
    color = raw.removeprefix("#")
    return color if _HEX6.fullmatch(color) else None

"""The `triage` section of a repository's settings: the everyday commands (issue 39), and beside them the
overview issue and the welcome. Its own module because ``bot.config.settings`` holds every other section and
had no room left; ``HandlerSettings.triage`` is this."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# Who may set a label with `/label`, by the least access that may (Prow's restricted labels).
LabelRole = Literal["anyone", "author", "triage", "write", "maintain", "admin"]


class TriageSettings(BaseModel):
    """The everyday commands (`/assign`, `/claim`, `/label` …)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(
        default=True,
        description="Whether Steward runs the everyday commands (assign, claim, label …) on this repository.",
    )
    short_commands: bool = Field(
        default=False,
        description="Whether the short forms (`/assign`, `/label`, `/claim` …) run too; `/steward assign` "
        "always does. Off by default: other bots (Prow, triagebot) answer the same short forms.",
    )
    labels: dict[LabelRole, tuple[str, ...]] = Field(
        default_factory=dict,
        description="Who may set or remove which labels with `/label`, by the least access that may "
        "(`anyone`, `author` — the issue's author —, `triage`, `write`, `maintain`, `admin`): names, or "
        "patterns with "
        "`*` (`area/*`); a name counts before a pattern, so `maintain: [P0]` restricts P0 beside "
        '`anyone: ["kind/*"]`. A label no entry names needs triage, as on the forge. Labels Steward manages '
        "itself (its states, gates and records) are never set this way. On Gitea, triage means write and "
        "maintain means admin.",
    )
    claimed_label: str = Field(
        default="claimed",
        description="Set while someone holds a `/claim` on an issue (Steward's own: never set by `/label`).",
    )
    release_claims_after_days: int | None = Field(
        default=30,
        ge=1,
        le=3650,
        description="A `/claim` with no activity from its claimant on the issue for this many days is "
        "released with a note (empty: never).",
    )
    duplicate_label: str = Field(
        default="duplicate",
        max_length=50,
        description="The label `/duplicate` puts on an issue it closes as a duplicate on Gitea, which keeps "
        "no close reason (on GitHub the issue is closed as a duplicate, its own reason); a closed issue "
        "that carries it counts as a duplicate on either forge.",
    )
    welcome: str = Field(
        default="",
        max_length=2000,
        description="Words for a first-time contributor, said once on their first issue or pull request here "
        "(after a mention of them); empty: no welcome. First-time is what the forge says — GitHub's author "
        "association, and no earlier issue or pull request of theirs in the repository.",
    )
    hold_label: str = Field(
        default="do-not-merge/hold",
        min_length=1,
        max_length=50,
        description="The label `/hold` puts on a pull request (Prow's name by default) beside a failing "
        "`steward/hold` status on its head; `/unhold` takes it off. Make `steward/hold` a required status "
        "check for the hold to block merging (`/steward config` says whether it is).",
    )
    overview: bool = Field(
        default=False,
        description="Keep one issue that says what needs whom (the overview): the bugs waiting for their "
        "reporter or for the maintainers, the refined and unclaimed ones, open design forks, bugfixes by "
        "state, escalated root-cause boards, milestones and their gates, claims gone stale. Pinned where "
        "the forge lets Steward pin it; rewritten when issues, pull requests or milestones change.",
    )
    overview_label: str = Field(
        default="steward-overview", description="The label of the overview issue (Steward sets it)."
    )
    overview_refresh_seconds: float = Field(
        default=60.0,
        ge=0,
        le=3600,
        description="How long Steward waits after a change before it rewrites the overview: the changes of "
        "that time cost one refresh.",
    )
    stale_claim_days: int = Field(
        default=7,
        ge=1,
        le=3650,
        description="The overview lists a claim as gone stale after this many days without activity from "
        "its claimant on the issue.",
    )
    cc_per_minute: int = Field(
        default=3,
        ge=0,
        le=60,
        description="How many people one person may ask for a review with `/cc` in a minute on this "
        "repository (each person named counts; 0: no limit).",
    )

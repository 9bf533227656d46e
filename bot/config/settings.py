"""Process settings, read from the environment (``STEWARD_*``).

Secrets are ``SecretStr`` so they never print in a repr, a log line or an exception.
Behaviour settings that handlers use (label names, permissions, limits) live in
``HandlerSettings``: one typed object with defaults that the per-repository
configuration file overrides later without the handlers changing.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Final, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from bot.config.label_texts import LABEL_DESCRIPTIONS
from bot.config.triage import TriageSettings
from bot.queue.budgets import DEFAULT_EVENTS_PER_MINUTE

Permission = Literal["anyone", "author", "triage", "write", "maintain", "admin"]
_RANK: dict[str, int] = {"anyone": 0, "author": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}
# Privileged acts: the least access a repository's configuration may ask for them (issue 24). Each one makes
# something count that review or CI alone would not — code from an outsider committed where CI runs with the
# repository's secrets, a missing proof excused, a gate overridden, Steward's own configuration proposed —
# so `commands.<name>.permission` below this is an error in `steward check-config`, and Steward uses the
# floor anyway. (Vouching for test code, `/bugfix --trust-test`, needs write whatever `commands.bugfix`
# says: handlers/bugfix checks it.)
PERMISSION_FLOORS: dict[str, tuple[Permission, str]] = {
    "accept-gap": ("write", "it excuses a bugfix from red proof"),
    "red-proof": ("write", "it confirms that CI's failure is the regression test's"),
    "gate-override": ("write", "it overrides the milestone gate"),
    "init": ("write", "it proposes Steward's own configuration and creates labels"),
    "ratify": ("write", "it ratifies a decision for everyone"),
    # The everyday commands (issue 39): assigning someone else is what the forge lets triage do.
    "assign": ("triage", "it assigns other people, which the forge lets only triage do"),
    # `/hold` blocks a pull request where its status is required; `/cc` notifies people: never anyone's.
    "hold": ("author", "it blocks merging a pull request"),
    "unhold": ("author", "it lets a held pull request be merged"),
    "cc": ("author", "it asks people for a review, and the forge notifies them"),
    # Closing and reopening as the forge lets people do it themselves: the author, or triage and more
    # (handlers/triage/closing.py adds the forge's own limit on an author's reopening).
    "close": ("author", "the forge lets only an issue's author or triage close it"),
    "reopen": ("author", "the forge lets only an issue's author or triage reopen it"),
    "duplicate": ("author", "it closes the issue, which the forge lets only its author or triage do"),
}


def at_least(a: Permission, b: Permission) -> Permission:
    """The stricter of two permissions."""
    return a if _RANK[a] >= _RANK[b] else b


def below_floor(command: str, permission: Permission) -> str | None:
    """Why ``permission`` is too low for ``command`` (None when it is not)."""
    floor = PERMISSION_FLOORS.get(command)
    if floor is None or _RANK[permission] >= _RANK[floor[0]]:
        return None
    return f"`{command}` needs at least `{floor[0]}`: {floor[1]}; `{permission}` is below that floor"


def _split_csv(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="STEWARD_", extra="ignore")

    redis_url: str = "redis://127.0.0.1:6379/0"
    host: str = "127.0.0.1"
    port: int = 8000
    log_level: str = "info"
    # auto: the console renderer when the log goes to a terminal, one JSON object per line otherwise.
    log_format: Literal["auto", "console", "json"] = "auto"

    github_api_url: str = "https://api.github.com"
    github_token: SecretStr | None = None
    github_app_id: str | None = None
    github_private_key_path: Path | None = None
    github_webhook_secrets: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)

    gitea_url: str | None = None
    gitea_token: SecretStr | None = None
    gitea_webhook_secrets: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)

    # The Ed25519 private key that signs Steward's records (PEM text, or the path of a PEM file). Without one,
    # Steward makes a key at its first start and keeps it in Redis (pin it: docs/integrity.md).
    signing_key: SecretStr | None = None
    # More public keys whose signatures verify (PEM texts or file paths, comma-separated): the keys used
    # before a rotation.
    verify_keys: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # When Steward started signing (an ISO-8601 time): an unsigned record in a comment or issue created before
    # it is legacy, one created after it was tampered with. Kept in Redis and in the workers' state file too
    # (the earliest of the three counts); set here it survives losing both (docs/integrity.md).
    signing_since: str | None = None

    # The bot's own login; discovered from the forge when empty.
    bot_login: str | None = None
    # The name of the canonical command prefix: `/steward help`.
    command_prefix: str = "steward"

    max_body_bytes: int = 25 * 1024 * 1024
    # Bodies over 1 MiB read and parsed at once by one receiver (the others wait): its memory peak is about
    # base + this × max_body_bytes × 5 (measured: docs/operations.md).
    max_large_bodies: int = Field(default=2, ge=1)
    dedupe_ttl_seconds: int = 7 * 24 * 3600
    http_timeout_seconds: float = 10.0

    # Write budget for content-creating forge calls, per token or installation.
    write_budget_per_minute: int = 80
    write_budget_per_hour: int = 500
    # The share of each write budget one repository, and one person (whose event or command a job runs), may
    # spend (1: no share of its own): an outsider's flood or one busy repository leaves the rest to others.
    write_share_per_repository: float = Field(default=0.5, gt=0, le=1)
    write_share_per_person: float = Field(default=0.25, gt=0, le=1)
    # Retry policy for forge calls.
    retry_attempts: int = 5
    retry_base_delay: float = 0.5
    retry_max_delay: float = 60.0
    # The longest a job waits for write budget; a longer wait defers the job instead (arq Retry).
    budget_max_wait_seconds: float = 5.0
    # The most items a forge list (``list_issues``) reads; a longer list raises TooManyItems rather than
    # being cut short, so no decision is taken on part of it.
    max_list_items: int = Field(default=1000, ge=1)

    # Worker
    max_jobs: int = 10
    # How often an idle worker asks Redis for new jobs: a job waits half of it on average before it starts
    # (docs/performance.md). Each idle worker makes 1/delay small Redis calls a second.
    worker_poll_delay_seconds: float = Field(default=0.02, gt=0, le=5)
    job_timeout_seconds: int = 300
    # arq's own time limit on a job is this much past ``job_timeout_seconds`` (Steward's fires first; arq's is
    # the backstop), and so is an issue lock's lifetime; a job whose worker died (SIGKILL, OOM) runs again
    # on another worker its timeout + this + 10 s after it started (docs/reliability.md).
    job_timeout_backstop_seconds: int = Field(default=30, ge=1)
    # Runs of a job that keeps failing (the first run included) before it is parked as dead.
    job_tries: int = Field(default=5, ge=1)
    # A failed job runs again after this × 2^(its failures so far) seconds, times 0.5–1 at random, at most a
    # minute: 1–2 s after the first failure, 2–4 s after the second, …
    job_retry_base_seconds: float = Field(default=1.0, gt=0, le=60)
    # The dead-letter list's cap in bytes (each entry keeps its event's JSON): past it the oldest go.
    dead_max_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    # Serve the worker's own Prometheus metrics on this port (the receiver serves /metrics).
    worker_metrics_port: int | None = None
    # Catch-up (`steward reconcile` as a job): every this many seconds, aligned to the clock (0: never);
    # and once when a worker starts after no worker ran for two minutes, or Redis comes back.
    reconcile_interval_seconds: int = Field(default=3600, ge=0)
    reconcile_on_start: bool = True
    # The catch-up walks every repository the forge says Steward is installed on and may write to (the
    # token's repositories, the App's installations: bot.catchup.installed); false: only those that sent an
    # event in the last 30 days (a token that reaches many repositories Steward should leave alone).
    reconcile_installed: bool = True
    # A small JSON file on a volume that outlives Redis (and the pod): the workers' heartbeat, the end of the
    # last completed catch-up and when Steward started signing, so a Redis that comes back empty is noticed
    # and caught up on (bot.worker.state_file). Unset: such a loss cannot be told from a first start.
    state_file: Path | None = None
    reconcile_timeout_seconds: int = Field(default=1800, ge=60)
    # Nothing acts until invited (DESIGN §3.15): a repository without a valid Steward configuration file
    # gets the onboarding pull request and the core commands (help, ping, init, config) only. False: every
    # repository the bot can see runs every capability on Steward's defaults from its first event, as
    # before the invitation rule (README "Upgrading").
    require_config: bool = True
    # Organisation-wide defaults: a repository of the same owner whose Steward file each repository's own
    # file extends (key by key). GitHub: the owner's `.github` repository by default; Gitea and Forgejo have
    # no such convention, so none unless named here. "" switches them off.
    github_org_config_repo: str = ".github"
    gitea_org_config_repo: str = ""
    # The catch-up stops (and goes on in a later run) when a forge has less than this share of its hourly
    # quota left, keeping the rest for people's commands; 0: never for the quota.
    reconcile_quota_floor: float = Field(default=0.5, ge=0, le=1)
    # A catch-up run's own time budget in seconds: past it the run stops after the repository it is on, and
    # the next run (a minute later) goes on from there. Unset: 80% of reconcile_timeout_seconds (and never
    # more than that, so the job's time limit cannot cut a repository short).
    reconcile_budget_seconds: float | None = Field(default=None, gt=0)

    @field_validator("github_webhook_secrets", "gitea_webhook_secrets", "verify_keys", mode="before")
    @classmethod
    def _csv(cls, value: object) -> object:
        return _split_csv(value)

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        """A URL redis-py reads as meant: it takes ``redis://host:6379/x`` for database 0, silently."""
        parsed = urlsplit(value)
        if parsed.scheme not in ("redis", "rediss", "unix"):
            raise ValueError("should look like redis://HOST:PORT/DB, for example redis://127.0.0.1:6379/0")
        if parsed.scheme != "unix":
            try:
                parsed.port  # noqa: B018  # raises on a port that is not a number
            except ValueError:
                raise ValueError("should have a port that is a number (redis://HOST:PORT/DB)") from None
            database = parsed.path.strip("/")
            if database and not database.isdigit():
                raise ValueError(f"should end in a database number, not {database!r} (redis://HOST:PORT/DB)")
        return value


# --- per-repository settings -------------------------------------------------------------------------
#
# One typed object, ``HandlerSettings``, holds everything a handler may be told per repository. Its defaults
# are Steward's; a repository's `.github/steward.yml` (`.gitea/steward.yml`) overrides them
# (``bot.config.repo_file``), and the JSON Schema that `steward check-config` uses is generated from these
# models, so every key below is documented by its ``description``. Each top-level section is one capability's
# home; capabilities add keys inside their section, never new sections. Unknown keys are errors.

_SECTION = ConfigDict(frozen=True, extra="forbid")


def _enabled(what: str) -> Any:
    return Field(default=True, description=f"Whether Steward runs {what} on this repository.")


class CommandSettings(BaseModel):
    model_config = _SECTION

    permission: Permission | None = Field(
        default=None,
        description="Who may run the command: anyone, author (the issue's author, or triage and more), "
        "triage, write, maintain or admin. On Gitea, which has only read/write/admin/owner, triage means "
        "write and maintain means admin.",
    )


class LimitSettings(BaseModel):
    """Bounds on what one person's text can make Steward do."""

    model_config = _SECTION

    commands_per_minute: int = Field(
        default=10,
        ge=0,
        le=1000,
        description="Commands one person may run on this repository in a minute; beyond it they get one "
        "short reply a minute in each thread where they are refused. 0 means no limit.",
    )
    events_per_minute: int = Field(
        default=DEFAULT_EVENTS_PER_MINUTE,
        ge=0,
        le=10_000,
        description="Edits, comments and label changes from one person on this repository handled in a "
        "minute; beyond it they are accepted but handled at that rate, the newest of each kind per issue "
        "standing for the ones before it. A comment with a command Steward runs counts under "
        "`commands_per_minute` instead (`/x` or an unknown `/steward x` is text). 0 means no limit.",
    )
    references_per_issue: int = Field(
        default=20,
        ge=0,
        le=200,
        description="`Blocked by #N` references and forge-linked blockers handled per issue; rest skipped.",
    )
    stories_per_bug: int = Field(default=20, ge=0, le=200, description="Stories refined per bug, at most.")


class BacklogSettings(BaseModel):
    """Backlog refinement: label names and interview limits."""

    model_config = _SECTION

    enabled: bool = _enabled("backlog refinement (the interview and the spec)")
    refine_label: str = Field(default="refine", description="The label that starts a refinement.")
    epic_label: str = Field(default="epic", description="Issues with this label are epics, never refined.")
    bug_label: str = Field(default="bug", description="Issues with this label are bug reports (RA9's).")
    approved_label: str = Field(default="refinement:approved", description="Set when a spec is approved.")
    level_label_prefix: str = Field(default="level:", description="Prefix of the level labels (level:L1…L3).")
    round_cap: int = Field(
        default=5, ge=1, le=50, description="Rounds of answers per interview before the bot stops asking."
    )
    max_questions: int = Field(default=4, ge=1, le=4, description="Questions asked per round (1–4).")
    label_colors: dict[str, str] = Field(
        default_factory=dict, description="Colours (hex, without #) for labels Steward creates, by name."
    )


class BugRefinementSettings(BaseModel):
    """RA9 bug refinement: the trigger label and the verdict labels."""

    model_config = _SECTION

    enabled: bool = _enabled("RA9 bug refinement")
    refine_label: str = Field(default="refine", description="The label that asks for a refinement.")
    bug_label: str = Field(default="bug", description="Issues with this label are bug reports.")
    pending_label: str = Field(default="refinement:pending", description="A bug awaiting refinement.")
    needs_info_label: str = Field(
        default="refinement:needs-info", description="A bug waiting for its reporter to answer the verdict."
    )
    needs_triage_label: str = Field(
        default="refinement:needs-triage",
        description="A bug whose reporter's part is complete, waiting for the maintainers' sections.",
    )
    rejected_label: str = Field(
        default="refinement:rejected",
        description="Steward's label for a bug with blockers before needs-info and needs-triage replaced it; "
        "an issue that carries it is relabelled the next time Steward refines it.",
    )
    approved_label: str = Field(default="refinement:approved", description="An approved (locked) bug.")
    pending_color: str = Field(default="fbca04", description="Colour of the pending label.")
    needs_info_color: str = Field(default="d4c5f9", description="Colour of the needs-info label.")
    needs_triage_color: str = Field(default="bfdadc", description="Colour of the needs-triage label.")
    rejected_color: str = Field(default="d73a4a", description="Colour of the old rejected label (unused).")
    approved_color: str = Field(default="0e8a16", description="Colour of the approved label.")
    remind_after_days: int | None = Field(
        default=None,
        ge=1,
        description="Nudges (off when empty): remind the reporter once when a bug has waited this many days "
        "for their answer (e.g. 14).",
    )
    close_after_days: int | None = Field(
        default=None,
        ge=1,
        description="With reminders on: close the bug with a kind note this many days after the reminder "
        "if no answer came (e.g. 14; empty: never close). The reporter's answer reopens it.",
    )
    nudge_exempt_labels: tuple[str, ...] = Field(
        default=("pinned", "security"),
        description="Bugs with any of these labels get no reminder and are never closed by Steward.",
    )

    def verdict_labels(self) -> tuple[str, ...]:
        """Every label Steward sets for a refinement state, and the old `rejected` one (it is removed)."""
        return (
            self.pending_label,
            self.needs_info_label,
            self.needs_triage_label,
            self.approved_label,
            self.rejected_label,
        )

    # What a passer-by sees (issue 34 §3): the verdict `rejected` shows as waiting for the reporter
    # (`needs-info`) or for the maintainers (`needs-triage`); a bare "rejected" means the latter.
    def label_for(self, state: str) -> str:
        labels = {
            "pending": self.pending_label,
            "needs-info": self.needs_info_label,
            "needs-triage": self.needs_triage_label,
            "rejected": self.needs_triage_label,
        }
        return labels.get(state, self.approved_label)

    def color_for(self, state: str) -> str:
        colors = {
            "pending": self.pending_color,
            "needs-info": self.needs_info_color,
            "needs-triage": self.needs_triage_color,
            "rejected": self.needs_triage_color,
        }
        return colors.get(state, self.approved_color)

    def description_for(self, state: str, language: str = "en") -> str:
        """The description of the label for ``state``, in the repository's language (``language``)."""
        table = LABEL_DESCRIPTIONS.get(language, LABEL_DESCRIPTIONS["en"])
        return table.get("needs-triage" if state == "rejected" else state, table["approved"])


class ForkSettings(BaseModel):
    """Decision provenance: design forks listed on issues and PRs, and their records."""

    model_config = _SECTION

    enabled: bool = _enabled("decision provenance (design forks and `/decide`)")
    headings: tuple[str, ...] = Field(
        default=("Open forks", "Forks", "Design forks", "Decisões em aberto"),
        description="Section headings (level 2) under which an issue lists its forks as `- [ ] F1: …`.",
    )
    open_label: str = Field(default="forks:open", description="Set while a fork is open, claimed or invalid.")
    resolved_label: str = Field(default="forks:resolved", description="Set when every fork is resolved.")


class MilestoneLabels(BaseModel):
    model_config = _SECTION

    cycle: str = Field(default="cycle", description="Items that need an audit label.")
    audit_clean: str = Field(default="audit:clean", description="A clean audit.")
    audit_ratified: str = Field(default="audit:ratified", description="A ratified audit.")
    fieldtest: str = Field(default="fieldtest", description="A field-test scenario.")
    fieldtest_pass: str = Field(default="fieldtest:pass", description="A scenario that passed.")
    finding_bug: str = Field(default="finding:bug", description="A bug found in the milestone.")
    finding_friction: str = Field(default="finding:friction", description="A friction finding.")
    finding_spec_gap: str = Field(default="finding:spec-gap", description="A spec-gap finding.")
    ratified: str = Field(default="ratified", description="A finding accepted as it is.")
    dashboard: str = Field(default="milestone-dashboard", description="The dashboard issues' label.")


class MilestoneSettings(BaseModel):
    """The milestone gate and its dashboards. The gate lets a milestone close when its items are closed and
    audited and, unless it is internal, a field test passed (an issue labelled `fieldtest` and
    `fieldtest:pass`); closed earlier, it is reopened with the reasons. A milestone with no user-facing change
    is internal: someone who may set the passing labels runs `/gate internal` on its dashboard, and no field
    test is asked of it (the description's `internal: true` line alone exempts nothing)."""

    model_config = _SECTION

    enabled: bool = _enabled("the milestone gate and dashboards")
    grace_period_seconds: int = Field(
        default=60, ge=0, le=86_400, description="How long after a milestone is closed the gate is evaluated."
    )
    internal_marker: str = Field(
        default="internal: true",
        description="A line in a milestone's description that says it is internal (no user-facing change). "
        "It exempts nothing by itself (anyone with write may edit a description): `/gate internal` on the "
        "dashboard, by someone with `label_permission`, does.",
    )
    notify: tuple[str, ...] = Field(
        default=(),
        description="Logins or @org/team names mentioned when a milestone is reopened on Gitea, which does "
        "not record who closed it. Unset: the repository's admins, which Gitea shows only to an admin "
        "account (else the notice says so).",
    )
    refresh_debounce_seconds: float = Field(
        default=10.0,
        ge=0,
        le=600,
        description="How long Steward waits after a change to a milestone's items before it refreshes the "
        "milestone's dashboard: the changes of that time cost one refresh.",
    )
    label_permission: Literal["triage", "write", "maintain", "admin"] = Field(
        default="maintain",
        description="Who may set the gate's passing labels (`fieldtest:pass`, `audit:clean`, "
        "`audit:ratified`, `ratified`, as named in `labels`): one counts only while the person who last "
        "applied it holds this access, and Steward puts back such a label that someone with less access adds "
        "to or removes from an item of a milestone. On Gitea, maintain means admin.",
    )
    labels: MilestoneLabels = Field(default_factory=MilestoneLabels, description="The gate's label names.")


class BugfixBudgets(BaseModel):
    model_config = _SECTION

    review_rounds: int = Field(default=5, ge=1, le=50, description="Review rounds per bug.")
    fix_cycles: int = Field(default=4, ge=1, le=50, description="New heads after actionable findings.")
    no_verdict_retries: int = Field(
        default=1, ge=0, le=10, description="Re-reviews after an inconclusive round."
    )


class SensitiveGroup(BaseModel):
    model_config = _SECTION

    paths: tuple[str, ...] = Field(
        default=(), description="Globs of the paths this group reviews (`*` within a directory, `**` across)."
    )
    reviewers: tuple[str, ...] = Field(
        default=(),
        description="The group's members, as logins or `@org/team` names (a team's members are read from the "
        "forge): one of them reviews a fix that touches the paths.",
    )


class BugfixSettings(BaseModel):
    """Regression-first bugfix branches."""

    model_config = _SECTION

    enabled: bool = _enabled("`/bugfix` and the regression-first status")
    branch_prefix: str = Field(
        default="bugfix/", description="Bugfix branches are named `<prefix><n>-<slug>`."
    )
    test_globs: tuple[str, ...] = Field(
        default=("tests/**", "test/**", "**/test_*.py", "**/*_test.py", "**/*_test.go", "**/*.test.*",
                 "**/*.spec.*", "**/__tests__/**", "spec/**"),
        description="Paths that are tests: the red commit may touch only these.",
    )  # fmt: skip
    required_contexts: tuple[str, ...] = Field(
        default=(),
        description="The CI contexts that run the tests: only their failures count as the red proof, and "
        "they must be green at the head; empty means every context reported.",
    )
    max_test_chars: int = Field(
        default=20_000,
        ge=100,
        le=40_000,
        description="Longest regression test code `/bugfix` shows and commits; longer code is refused, "
        "never cut.",
    )
    max_commits_after_red: int = Field(
        default=2, ge=1, le=20, description="Commits allowed after the red one (the fix, and a review fix)."
    )
    budgets: BugfixBudgets = Field(default_factory=BugfixBudgets, description="The review budget per bug.")
    sensitive_paths: dict[str, SensitiveGroup] = Field(
        default_factory=dict,
        description="Reviewer groups by name (e.g. `security`, `migration`, `architecture`): a fix that "
        "touches a group's paths also needs a clean `/review` round or an approval on its head from one of "
        "the group's reviewers.",
    )
    request_reviewers: bool = Field(
        default=False,
        description="Ask independent reviewers for a bugfix pull request once its fix is pushed and it is "
        "ready (again when its files change): code owners of the changed files, else `reviewer_pool`.",
    )
    reviewers: int = Field(default=1, ge=1, le=10, description="How many reviewers `request_reviewers` asks.")
    reviewer_pool: tuple[str, ...] = Field(
        default=(),
        description="Logins (or `@org/team`) asked when no code owner of the changed files may review.",
    )
    max_fix_lines: int = Field(
        default=400,
        ge=1,
        le=1_000_000,
        description="Lines the fix may change (added plus removed, test files aside) before the status asks "
        "for a maintainer's `/scope <reason>`.",
    )
    scope_globs: tuple[str, ...] = Field(
        default=(".github/**", ".gitea/**", ".forgejo/**", ".gitlab-ci.yml", ".circleci/**", ".travis.yml",
                 "Jenkinsfile", "azure-pipelines.yml", "**/*.lock", "**/package-lock.json",
                 "**/npm-shrinkwrap.json", "**/pnpm-lock.yaml", "**/go.sum", "**/*_pb2.py", "**/*.pb.go",
                 "**/*.generated.*", "**/generated/**", "**/*.min.js", "**/.env", "**/.env.*", "**/*.pem",
                 "**/*.key", "**/*.p12", "**/*.pfx", "**/id_rsa*", "**/*secret*", "**/*credential*",
                 "**/.npmrc", "**/.pypirc", "**/.netrc"),
        description="Files a fix changes only with a maintainer's explicit `/scope <reason>`, even where the "
        "evidence names them: CI configuration, lockfiles, generated files and files that look like secrets.",
    )  # fmt: skip


class DebugSettings(BaseModel):
    """Root-cause discipline: the hypotheses board."""

    model_config = _SECTION

    enabled: bool = _enabled("the hypotheses board and the root-cause gate")
    pending_timeout_hours: int = Field(
        default=72, ge=1, le=24 * 90, description="A hypothesis pending longer counts as inconclusive."
    )
    escalate_to: tuple[str, ...] = Field(
        default=(), description="Logins or @org/team names mentioned when every hypothesis failed."
    )


Preset = Literal["refine-bugs", "refine-and-bugfix", "everything"]
# The capabilities (settings sections with an `enabled` switch) each preset switches on; the others it
# switches off. The heavy ones — the milestone gate, which reopens a milestone without a passed field test,
# and the backlog interview with its levels — run only when chosen.
PRESETS: Final[dict[str, frozenset[str]]] = {
    "refine-bugs": frozenset({"bug_refinement"}),
    "refine-and-bugfix": frozenset({"bug_refinement", "debug", "bugfix", "triage"}),
    "everything": frozenset(
        {"bug_refinement", "backlog", "forks", "milestones", "bugfix", "debug", "triage"}
    ),
}


class HandlerSettings(BaseModel):
    """What a handler may be told per repository: Steward's defaults, overridden by the repository's
    configuration file. Sections: one per capability."""

    model_config = _SECTION

    preset: Preset | None = Field(
        default=None,
        description="Which capabilities run, in one word; a section's own `enabled` overrides it. "
        "`refine-bugs`: RA9 bug refinement only. `refine-and-bugfix`: that, the hypotheses board, "
        "regression-first bugfix branches and the everyday commands (`triage`: assign, claim, label …). "
        "`everything`: every capability, the milestone gate (every "
        "milestone then needs a passed field test) and backlog refinement too. Unset: every capability.",
    )
    language: Literal["en", "pt"] = Field(
        default="en",
        description="The repository's language (`en` or `pt`): the descriptions of the labels Steward "
        "creates here, updated when it changes. A verdict speaks its report's language, whatever this says.",
    )
    mode: Literal["live", "shadow"] = Field(
        default="live",
        description="`live`: Steward acts here. `shadow`: it works out everything it would do and logs it, "
        "but writes nothing to the forge (no comment, reaction, label, status, branch or pull request) "
        "except its answers to `/steward config`, `help` and `ping`; `/steward config` shows the last things "
        "it would have done, so a team can watch it before letting it speak.",
    )
    commands: dict[str, CommandSettings] = Field(
        default_factory=dict,
        description="Per command (by name, e.g. `approve-spec`): who may run it.",
    )
    limits: LimitSettings = Field(default_factory=LimitSettings, description=LimitSettings.__doc__ or "")
    bug_refinement: BugRefinementSettings = Field(
        default_factory=BugRefinementSettings, description=BugRefinementSettings.__doc__ or ""
    )
    backlog: BacklogSettings = Field(
        default_factory=BacklogSettings, description=BacklogSettings.__doc__ or ""
    )
    forks: ForkSettings = Field(default_factory=ForkSettings, description=ForkSettings.__doc__ or "")
    milestones: MilestoneSettings = Field(
        default_factory=MilestoneSettings, description=MilestoneSettings.__doc__ or ""
    )
    bugfix: BugfixSettings = Field(default_factory=BugfixSettings, description=BugfixSettings.__doc__ or "")
    debug: DebugSettings = Field(default_factory=DebugSettings, description=DebugSettings.__doc__ or "")
    triage: TriageSettings = Field(default_factory=TriageSettings, description=TriageSettings.__doc__ or "")

    def permission(self, command: str, default: Permission) -> Permission:
        """Who may run ``command`` here: the repository's override, else the command's default."""
        found = self.commands.get(command)
        chosen = found.permission if found is not None and found.permission is not None else default
        floor = PERMISSION_FLOORS.get(command)
        return at_least(chosen, floor[0]) if floor is not None else chosen


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()

"""Process settings, read from the environment (``STEWARD_*``).

Secrets are ``SecretStr`` so they never print in a repr, a log line or an exception.
Behaviour settings that handlers use (label names, permissions, limits) live in
``HandlerSettings``: one typed object with defaults that the per-repository
configuration file overrides later without the handlers changing.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

Permission = Literal["anyone", "author", "triage", "write", "maintain", "admin"]


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
    log_format: Literal["console", "json"] = "console"

    github_api_url: str = "https://api.github.com"
    github_token: SecretStr | None = None
    github_app_id: str | None = None
    github_private_key_path: Path | None = None
    github_webhook_secrets: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)

    gitea_url: str | None = None
    gitea_token: SecretStr | None = None
    gitea_webhook_secrets: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)

    # The bot's own login; discovered from the forge when empty.
    bot_login: str | None = None
    # The name of the canonical command prefix: `/steward help`.
    command_prefix: str = "steward"

    max_body_bytes: int = 25 * 1024 * 1024
    dedupe_ttl_seconds: int = 7 * 24 * 3600
    http_timeout_seconds: float = 10.0

    # Write budget for content-creating forge calls, per token or installation.
    write_budget_per_minute: int = 80
    write_budget_per_hour: int = 500
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
    job_timeout_seconds: int = 300
    job_tries: int = 5
    # Serve the worker's own Prometheus metrics on this port (the receiver serves /metrics).
    worker_metrics_port: int | None = None

    @field_validator("github_webhook_secrets", "gitea_webhook_secrets", mode="before")
    @classmethod
    def _csv(cls, value: object) -> object:
        return _split_csv(value)


class BacklogSettings(BaseModel):
    """Backlog refinement (``handlers.backlog``): label names and interview limits."""

    model_config = {"frozen": True}

    refine_label: str = "refine"
    epic_label: str = "epic"
    bug_label: str = "bug"
    approved_label: str = "refinement:approved"
    level_label_prefix: str = "level:"
    # The stop gate's cap: rounds of answers per interview before the bot stops asking.
    round_cap: int = Field(default=5, ge=1, le=50)
    # Questions shown per round (the issue asks for 1–4).
    max_questions: int = Field(default=4, ge=1, le=4)


class BugRefinementSettings(BaseModel):
    """RA9 bug refinement (``handlers.bug_refinement``): the trigger label and the verdict labels."""

    model_config = {"frozen": True}

    refine_label: str = "refine"
    bug_label: str = "bug"
    pending_label: str = "refinement:pending"
    rejected_label: str = "refinement:rejected"
    approved_label: str = "refinement:approved"
    pending_color: str = "fbca04"
    rejected_color: str = "d73a4a"
    approved_color: str = "0e8a16"

    def verdict_labels(self) -> tuple[str, str, str]:
        return (self.pending_label, self.rejected_label, self.approved_label)

    def label_for(self, verdict: str) -> str:
        labels = {"pending": self.pending_label, "rejected": self.rejected_label}
        return labels.get(verdict, self.approved_label)

    def color_for(self, verdict: str) -> str:
        colors = {"pending": self.pending_color, "rejected": self.rejected_color}
        return colors.get(verdict, self.approved_color)

    def description_for(self, verdict: str) -> str:
        return {
            "pending": "Steward: this bug report awaits refinement",
            "rejected": "Steward: refinement found blockers (see the verdict comment)",
        }.get(verdict, "Steward: refinement approved")


class LimitSettings(BaseModel):
    """Bounds on what one person's text can make Steward do (DESIGN §3.9)."""

    model_config = {"frozen": True}

    # Commands one person may run on one repository in a minute; beyond it one short reply a minute.
    commands_per_minute: int = Field(default=10, ge=0, le=1000)
    # `Blocked by #N` references handled per issue; the rest are listed as skipped.
    references_per_issue: int = Field(default=20, ge=0, le=200)
    # Stories refined per bug.
    stories_per_bug: int = Field(default=20, ge=0, le=200)


class HandlerSettings(BaseModel):
    """Behaviour settings for handlers; defaults here, per-repo overrides later."""

    model_config = {"frozen": True}

    command_permissions: dict[str, Permission] = Field(default_factory=dict)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    label_colors: dict[str, str] = Field(default_factory=dict)
    max_comment_chars: int = 60_000
    backlog: BacklogSettings = Field(default_factory=BacklogSettings)
    bug_refinement: BugRefinementSettings = Field(default_factory=BugRefinementSettings)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()

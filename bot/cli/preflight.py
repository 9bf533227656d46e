"""What `steward run`, `steward serve` and `steward worker` check before they start: a forge configured, the
webhook secret of each forge whose deliveries they receive, and the credentials accepted by the forge
(GitHub: ``GET /user`` with a token, ``GET /app`` with the App's JWT; Gitea: ``GET /api/v1/user``).

A wrong setting, or credentials the forge rejects (401, 403), stop the command before it starts, with one
sentence naming the variable and what to do, and exit status ``EXIT_REFUSED``: a process that started
anyway would acknowledge deliveries and park every one of them in the dead-letter list. A forge that does
not answer, or answers 5xx, is not a reason to stop (an outage of the forge must not crash-loop every pod):
the command says so once and starts, and its jobs wait and retry as they do for Redis. One request per
forge, no retry. A receiver alone (`serve`) needs no credentials (it never calls the forge; the Helm chart
gives them to the workers only): it checks its webhook secrets, and the credentials only when it has them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bot.config.settings import Settings

# The exit status of a command that refused to start (documented in `steward --help` and the README).
EXIT_REFUSED = 4

_HEADERS = {"Accept": "application/vnd.github+json", "User-Agent": "steward-preflight"}


class Refused(Exception):
    """The configuration or the credentials are wrong: the message is one sentence saying which and what
    to do."""


@dataclass(frozen=True)
class Warning_:
    """A forge that could not be asked (down, 5xx, rate limited): the command starts anyway."""

    forge: Literal["github", "gitea"]
    url: str
    reason: str


def _github_configured(settings: Settings) -> bool:
    return settings.github_token is not None or settings.github_app_id is not None


def _github_checkable(settings: Settings) -> bool:
    """Credentials complete enough to ask GitHub: a token, or the App's id and key."""
    return settings.github_token is not None or (
        settings.github_app_id is not None and settings.github_private_key_path is not None
    )


def _gitea_checkable(settings: Settings) -> bool:
    return bool(settings.gitea_url) and settings.gitea_token is not None


def configuration(settings: Settings, *, receives: bool, acts: bool = True) -> None:
    """The settings alone (no request): raise ``Refused`` for the first thing missing or inconsistent.

    ``acts``: the process calls the forge (`worker`, `run`, `reconcile`): it needs a forge's credentials.
    ``receives``: it takes deliveries (`serve`, `run`): each forge it receives from needs its webhook secret.
    A receiver alone (`serve`) never calls the forge, so it may run without the forge's credentials (the
    Helm chart gives them to the workers only); it receives from each forge whose credentials, address
    (STEWARD_GITEA_URL), App id or webhook secret it is given."""
    if acts:
        _acting(settings)
    if not receives:
        return
    github = _github_configured(settings) or bool(settings.github_webhook_secrets)
    gitea = bool(settings.gitea_url or settings.gitea_token or settings.gitea_webhook_secrets)
    if not github and not gitea:
        raise Refused(
            "No forge is configured to receive from: set STEWARD_GITHUB_WEBHOOK_SECRETS (GitHub) or "
            "STEWARD_GITEA_WEBHOOK_SECRETS (Gitea) to the secret of the webhook that sends deliveries here, "
            "and the forge's credentials for the workers (STEWARD_GITHUB_TOKEN, STEWARD_GITEA_TOKEN)."
        )
    if github and not settings.github_webhook_secrets:
        raise Refused(
            "STEWARD_GITHUB_WEBHOOK_SECRETS is empty: set it to the secret of the webhook that sends "
            "GitHub's deliveries here (the repository's, organisation's or App's), or every delivery "
            "is refused."
        )
    if gitea and not settings.gitea_webhook_secrets:
        raise Refused(
            "STEWARD_GITEA_WEBHOOK_SECRETS is empty: set it to the secret of the Gitea webhook that "
            "sends deliveries here, or every delivery is refused."
        )


def _acting(settings: Settings) -> None:
    github = _github_configured(settings)
    if settings.gitea_url and settings.gitea_token is None:
        raise Refused(
            "STEWARD_GITEA_URL is set but STEWARD_GITEA_TOKEN is not: set it to a token of Steward's Gitea "
            "account (or unset STEWARD_GITEA_URL)."
        )
    if settings.gitea_token is not None and not settings.gitea_url:
        raise Refused(
            "STEWARD_GITEA_TOKEN is set but STEWARD_GITEA_URL is not: set it to the Gitea server's address, "
            "for example https://gitea.example.org."
        )
    if not github and not settings.gitea_url:
        raise Refused(
            "No forge is configured: set STEWARD_GITHUB_TOKEN (or STEWARD_GITHUB_APP_ID with "
            "STEWARD_GITHUB_PRIVATE_KEY_PATH) for GitHub, or STEWARD_GITEA_URL with STEWARD_GITEA_TOKEN "
            "for Gitea or Forgejo."
        )
    if github and settings.github_token is None:
        if settings.github_private_key_path is None:
            raise Refused(
                "STEWARD_GITHUB_APP_ID is set but STEWARD_GITHUB_PRIVATE_KEY_PATH is not: set it to the "
                "App's private key file (PEM, from the App's settings page)."
            )
        _read_key(settings)


def _read_key(settings: Settings) -> str:
    assert settings.github_private_key_path is not None
    try:
        return Path(settings.github_private_key_path).read_text()
    except OSError as exc:
        raise Refused(
            f"STEWARD_GITHUB_PRIVATE_KEY_PATH names {settings.github_private_key_path}, which cannot be "
            f"read ({exc.strerror or exc}): point it to the App's private key file (PEM)."
        ) from None


def _github_request(settings: Settings) -> tuple[str, dict[str, str], str, str]:
    """The URL, the headers, the variable that holds the credential, and what the request is."""
    base = settings.github_api_url.rstrip("/")
    if settings.github_token is not None:
        token = settings.github_token.get_secret_value()
        return f"{base}/user", {"Authorization": f"token {token}"}, "STEWARD_GITHUB_TOKEN", "the token"
    from gidgethub import apps

    assert settings.github_app_id is not None
    key = _read_key(settings)
    try:
        jwt = apps.get_jwt(app_id=settings.github_app_id, private_key=key)
    except (ValueError, TypeError) as exc:
        raise Refused(
            f"STEWARD_GITHUB_PRIVATE_KEY_PATH ({settings.github_private_key_path}) is not a private key "
            f"Steward can sign with ({type(exc).__name__}): download the App's private key (PEM) again."
        ) from None
    variables = "STEWARD_GITHUB_APP_ID and STEWARD_GITHUB_PRIVATE_KEY_PATH"
    return f"{base}/app", {"Authorization": f"Bearer {jwt}"}, variables, "the App's key"


def _rejected(status: int, headers: Any) -> bool:
    """401, or a 403 that is not a rate limit (GitHub answers 403 with no requests left)."""
    if status == 401:
        return True
    return status == 403 and headers.get("x-ratelimit-remaining") != "0" and "retry-after" not in headers


def _message(body: Any) -> str:
    try:
        found = body.json()
    except ValueError:
        return ""
    text = found.get("message") if isinstance(found, dict) else None
    return f' ("{str(text)[:120]}")' if text else ""


def credentials(settings: Settings) -> list[Warning_]:
    """One request per configured forge: raise ``Refused`` when a forge rejects the credentials; a forge
    that cannot be asked is returned as a warning (the command starts anyway)."""
    import httpx2

    checks: list[tuple[Literal["github", "gitea"], str, dict[str, str], str, str]] = []
    if _github_checkable(settings):
        checks.append(("github", *_github_request(settings)))
    if _gitea_checkable(settings):
        assert settings.gitea_url is not None and settings.gitea_token is not None
        url = f"{settings.gitea_url.rstrip('/')}/api/v1/user"
        auth = {"Authorization": f"token {settings.gitea_token.get_secret_value()}"}
        checks.append(("gitea", url, auth, "STEWARD_GITEA_TOKEN", "the token"))
    warnings: list[Warning_] = []
    timeout = min(float(settings.http_timeout_seconds), 10.0)
    with httpx2.Client(timeout=timeout, follow_redirects=False) as client:
        for forge, url, auth, variable, what in checks:
            name = "GitHub" if forge == "github" else "Gitea"
            try:
                answer = client.get(url, headers={**_HEADERS, **auth})
            except httpx2.HTTPError as exc:
                warnings.append(Warning_(forge, url, type(exc).__name__))
                continue
            if _rejected(answer.status_code, answer.headers):
                raise Refused(
                    f"{name} rejected {what} in {variable} (GET {url}: {answer.status_code}"
                    f"{_message(answer)}): "
                    + (
                        "check the App's id and private key, or generate a new key."
                        if variable.startswith("STEWARD_GITHUB_APP")
                        else "set it to a valid token of Steward's account"
                        + (
                            " (a token with the read:user scope and write access to repositories and issues)."
                            if forge == "gitea"
                            else "."
                        )
                    )
                )
            if answer.status_code == 404:
                where = "STEWARD_GITHUB_API_URL" if forge == "github" else "STEWARD_GITEA_URL"
                raise Refused(
                    f"{name} has no GET {url} (404): check {where}"
                    + (
                        " (GitHub Enterprise Server's API is at https://HOST/api/v3)."
                        if forge == "github"
                        else " (the server's address, without /api/v1)."
                    )
                )
            if answer.status_code >= 400:
                warnings.append(Warning_(forge, url, f"HTTP {answer.status_code}"))
    return warnings


def check(settings: Settings, *, receives: bool, acts: bool) -> list[Warning_]:
    """Everything above, in order; raises ``Refused``. The credentials given are checked even where the
    process does not need them (a receiver given a token checks it too)."""
    configuration(settings, receives=receives, acts=acts)
    return credentials(settings)

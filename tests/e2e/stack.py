"""Real parts for end-to-end tests: uvicorn receivers and arq workers in threads, users of the
sandbox forge over HTTP, and polling helpers with deadlines (no sleeps to wait for work)."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import redis
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.demo.threads import ThreadedServer, ThreadedWorker, free_port, jobs_outstanding, run_periodic_now
from bot.receiver.signatures import sign_sha256
from bot.records.signing import private_pem

__all__ = ["ThreadedServer", "ThreadedWorker", "free_port", "run_periodic_now"]

T = TypeVar("T")
# One webhook secret per test process: runs side by side (pytest-xdist's workers, another developer's run)
# each bind receivers to free ports, and a port one run's receiver gave up (stopped, or down on purpose in a
# test) may be taken by another's; a delivery from the first run's sandbox then fails the signature check
# instead of being queued, and handled, by a Steward it was never meant for.
SECRET = f"e2e-webhook-secret-{uuid.uuid4().hex[:12]}"
# The signing key an operator pins (STEWARD_SIGNING_KEY, docs/integrity.md) for the processes tests start: a
# worker without one says so loudly (its /readyz answers 503).
SIGNING_KEY = private_pem(Ed25519PrivateKey.generate())
# The tests speak plain HTTP to 127.0.0.1, so their clients skip TLS: building the default TLS context loads
# the CA bundle, ~70 ms a client, and an end-to-end test makes several (users, deliveries, each settle).
PLAIN: Any = {"verify": False}
ROOT = Path(__file__).resolve().parents[2]


def app_key(tmp_path: Path) -> tuple[Path, str]:
    """A new GitHub App's private key, written to ``tmp_path/app.pem`` (PKCS8, as GitHub hands it out) for
    ``STEWARD_GITHUB_PRIVATE_KEY_PATH``, and its public key's PEM for the sandbox's ``/_sandbox/apps``."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_path = tmp_path / "app.pem"
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return key_path, public.decode()


def wait_for[T](check: Callable[[], T | None], *, timeout: float = 20.0, what: str = "a condition") -> T:
    """Poll ``check`` until it returns something truthy, or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.2)


# The configuration file every test repository gets unless it asks for none (``ForgeUser.create_repo``): a
# valid file that sets nothing, so Steward is invited and runs on its defaults (or a test's handler_settings).
TEST_CONFIG = "# A test repository: Steward is switched on here, with its defaults.\n"
TEST_CONFIG_PATHS = {"github": ".github/steward.yml", "gitea": ".gitea/steward.yml"}

# GitHub roles → Gitea's access modes. Gitea has no triage or maintain: a triager there is a write
# collaborator, the least that may label issues.
GITEA_ACCESS = {"pull": "read", "read": "read", "triage": "write", "push": "write", "write": "write"}
GITEA_ACCESS |= {"maintain": "write", "admin": "admin"}
GITEA_HOOK_EVENTS = ["issues", "issue_comment", "pull_request", "push"]


class ForgeUser:
    """Someone using the sandbox forge over its GitHub API (`flavor="github"`) or its Gitea API
    (`flavor="gitea"`, at `/api/v1`). Paths are the same on both (`/repos/{owner}/{repo}/...`);
    where the APIs differ (hooks, labels by id, permission names) the methods translate."""

    def __init__(self, base_url: str, login: str, token: str, flavor: str = "github") -> None:
        self.login = login
        self.flavor = flavor
        self.base_url = base_url
        self.client = httpx2.Client(
            **PLAIN,
            base_url=base_url + ("/api/v1" if flavor == "gitea" else ""),
            headers={"Authorization": f"token {token}", "Accept": "application/vnd.github+json"},
            timeout=10,
        )

    @property
    def webhook_path(self) -> str:
        return f"/webhooks/{self.flavor}"

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        expect: int | tuple[int, ...] = (200, 201, 202, 204),
    ) -> Any:
        response = self.client.request(method, path, json=body)
        wanted = (expect,) if isinstance(expect, int) else expect
        assert response.status_code in wanted, (
            f"{method} {path}: {response.status_code} {response.text[:500]}"
        )
        return response.json() if response.content else None

    def create_repo(self, name: str | None = None, *, configured: bool = True) -> str:
        """A new repository. ``configured`` (the default): with a Steward configuration file that sets
        nothing (``TEST_CONFIG``), committed before any webhook exists, so the repository has invited
        Steward (DESIGN §3.15) and every capability runs on its defaults from the test's first event.
        ``configured=False``: a repository as a new user has it — Steward answers only help, ping, init and
        config, and proposes the file (the onboarding and invitation tests)."""
        made = self.call("POST", "/user/repos", {"name": name or f"repo-{uuid.uuid4().hex[:8]}"})
        repo = str(made["full_name"])
        if configured:
            self.put_file(repo, TEST_CONFIG_PATHS[self.flavor], TEST_CONFIG)
        return repo

    def add_collaborator(self, repo: str, login: str, permission: str) -> None:
        if self.flavor == "gitea":
            self.call("PUT", f"/repos/{repo}/collaborators/{login}", {"permission": GITEA_ACCESS[permission]})
            return
        # GitHub's API invites a collaborator, who must accept; the sandbox's admin API adds one at once.
        added = httpx2.put(
            f"{self.base_url}/_sandbox/repos/{repo}/collaborators/{login}",
            json={"permission": permission},
            timeout=10,
            **PLAIN,
        )
        assert added.status_code == 200, added.text

    def add_hook(self, repo: str, url: str, secret: str = SECRET) -> int:
        config = {"url": url, "content_type": "json", "secret": secret}
        if self.flavor == "gitea":
            body = {"type": "gitea", "config": config, "events": GITEA_HOOK_EVENTS, "active": True}
        else:
            body = {"config": config, "events": ["*"], "active": True}
        return int(self.call("POST", f"/repos/{repo}/hooks", body)["id"])

    def _label_ids(self, repo: str, names: list[str]) -> list[int]:
        existing = {lb["name"]: lb["id"] for lb in self.call("GET", f"/repos/{repo}/labels?limit=50")}
        for name in names:
            if name not in existing:
                made = self.call("POST", f"/repos/{repo}/labels", {"name": name, "color": "ededed"})
                existing[name] = made["id"]
        return [existing[name] for name in names]

    def open_issue(
        self,
        repo: str,
        title: str,
        body: str = "",
        labels: list[str] | None = None,
        *,
        milestone: int | None = None,
    ) -> int:
        """``milestone``: the milestone's key (GitHub's number, Gitea's id: see ``create_milestone``)."""
        wanted: list[Any] = list(labels or [])
        if self.flavor == "gitea":
            wanted = self._label_ids(repo, wanted)
        data: dict[str, Any] = {"title": title, "body": body, "labels": wanted}
        if milestone is not None:
            data["milestone"] = milestone
        issue = self.call("POST", f"/repos/{repo}/issues", data)
        return int(issue["number"])

    def add_labels(self, repo: str, number: int, names: list[str]) -> None:
        wanted: list[Any] = self._label_ids(repo, names) if self.flavor == "gitea" else names
        self.call("POST", f"/repos/{repo}/issues/{number}/labels", {"labels": wanted})

    def remove_label(self, repo: str, number: int, name: str) -> None:
        which = str(self._label_ids(repo, [name])[0]) if self.flavor == "gitea" else name
        self.call("DELETE", f"/repos/{repo}/issues/{number}/labels/{which}")

    def edit_issue(self, repo: str, number: int, **fields: Any) -> None:
        self.call("PATCH", f"/repos/{repo}/issues/{number}", fields)

    def issue(self, repo: str, number: int) -> dict[str, Any]:
        return dict(self.call("GET", f"/repos/{repo}/issues/{number}"))

    def issues(self, repo: str, label: str) -> list[dict[str, Any]]:
        """Every issue (open or closed) with ``label``."""
        size = "limit" if self.flavor == "gitea" else "per_page"
        return list(self.call("GET", f"/repos/{repo}/issues?state=all&labels={label}&{size}=50"))

    # --- milestones (GitHub names them by number, Gitea by id: both are "the key" here) -------------------

    def create_milestone(self, repo: str, title: str, description: str = "") -> int:
        made = self.call("POST", f"/repos/{repo}/milestones", {"title": title, "description": description})
        return int(made["id"] if self.flavor == "gitea" else made["number"])

    def milestone(self, repo: str, key: int) -> dict[str, Any]:
        return dict(self.call("GET", f"/repos/{repo}/milestones/{key}"))

    def set_milestone_state(self, repo: str, key: int, state: str) -> None:
        self.call("PATCH", f"/repos/{repo}/milestones/{key}", {"state": state})

    def set_milestone(self, repo: str, number: int, key: int | None) -> None:
        """Put an issue or pull request in milestone ``key`` (None: take it out)."""
        none = 0 if self.flavor == "gitea" else None
        self.call("PATCH", f"/repos/{repo}/issues/{number}", {"milestone": key if key is not None else none})

    # --- pull requests ------------------------------------------------------------------------------------

    def open_pull(
        self, repo: str, title: str, branch: str, *, milestone: int | None = None, body: str = ""
    ) -> int:
        """A pull request of a new branch with one new file into main (optionally in a milestone)."""
        if self.flavor == "gitea":
            self.call("POST", f"/repos/{repo}/branches", {"new_branch_name": branch, "old_ref_name": "main"})
        else:
            head = self.call("GET", f"/repos/{repo}/git/ref/heads/main")["object"]["sha"]
            self.call("POST", f"/repos/{repo}/git/refs", {"ref": f"refs/heads/{branch}", "sha": head})
        content = {"message": f"add {branch}", "content": "aGVsbG8K", "branch": branch}
        self.call(
            "POST" if self.flavor == "gitea" else "PUT", f"/repos/{repo}/contents/{branch}.txt", content
        )
        pull = {"head": branch, "base": "main", "title": title, "body": body}
        number = int(self.call("POST", f"/repos/{repo}/pulls", pull)["number"])
        if milestone is not None:
            self.set_milestone(repo, number, milestone)
        return number

    def merge_pull(self, repo: str, number: int) -> None:
        if self.flavor == "gitea":
            self.call("POST", f"/repos/{repo}/pulls/{number}/merge", {"Do": "merge"})
        else:
            self.call("PUT", f"/repos/{repo}/pulls/{number}/merge", {})

    def labels_of(self, repo: str, number: int) -> list[str]:
        return sorted(label["name"] for label in self.call("GET", f"/repos/{repo}/issues/{number}")["labels"])

    def blocked_by(self, repo: str, number: int) -> list[int]:
        """The issues this one is declared blocked by (GitHub's and Gitea's dependency APIs)."""
        path = "dependencies" if self.flavor == "gitea" else "dependencies/blocked_by"
        return [int(item["number"]) for item in self.call("GET", f"/repos/{repo}/issues/{number}/{path}")]

    def link_blocker(self, repo: str, number: int, blocker: int) -> None:
        """Marks `blocker` as blocking `number` in the forge's own dependency links (as a person does in the
        issue's sidebar), without a word in any text."""
        if self.flavor == "gitea":
            owner, name = repo.split("/")
            body: dict[str, object] = {"owner": owner, "repo": name, "index": blocker}
            self.call("POST", f"/repos/{repo}/issues/{number}/dependencies", body)
        else:
            body = {"issue_id": self.call("GET", f"/repos/{repo}/issues/{blocker}")["id"]}
            self.call("POST", f"/repos/{repo}/issues/{number}/dependencies/blocked_by", body)

    def comment(self, repo: str, number: int, body: str) -> int:
        return int(self.call("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})["id"])

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None:
        self.call("PATCH", f"/repos/{repo}/issues/comments/{comment_id}", {"body": body})

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        if self.flavor == "gitea":  # Gitea answers an issue's comments whole
            return list(self.call("GET", f"/repos/{repo}/issues/{number}/comments"))
        out: list[dict[str, Any]] = []
        page = 1
        while True:
            batch = self.call("GET", f"/repos/{repo}/issues/{number}/comments?per_page=100&page={page}")
            out += batch
            if len(batch) < 100:
                return out
            page += 1

    def reactions(self, repo: str, comment_id: int) -> list[str]:
        return [
            r["content"] for r in self.call("GET", f"/repos/{repo}/issues/comments/{comment_id}/reactions")
        ]

    def file_sha(self, repo: str, path: str, branch: str | None = None) -> str | None:
        """The blob sha of a file on ``branch`` (default branch), or None when there is none."""
        response = self.client.get(
            f"/repos/{repo}/contents/{path}", params={"ref": branch} if branch else None
        )
        return str(response.json()["sha"]) if response.status_code == 200 else None

    def put_file(
        self, repo: str, path: str, text: str, *, branch: str | None = None, as_user: str | None = None
    ) -> str:
        """Create or update a file with the contents API (one commit, one push); returns the commit sha.
        ``as_user``: the commit names that user as its author and committer (both forges take `author` and
        `committer` identities; the forge links the commit to the account with that e-mail address)."""
        current = self.file_sha(repo, path, branch)
        body: dict[str, Any] = {
            "message": f"Update {path}",
            "content": base64.b64encode(text.encode()).decode(),
        }
        if as_user:
            domain = "noreply.sandbox" if self.flavor == "gitea" else "users.noreply.sandbox"
            body["author"] = body["committer"] = {"name": as_user, "email": f"{as_user}@{domain}"}
        if branch:
            body["branch"] = branch
        if current:
            body["sha"] = current
        method = "POST" if self.flavor == "gitea" and current is None else "PUT"
        return str(self.call(method, f"/repos/{repo}/contents/{path}", body)["commit"]["sha"])

    def create_branch(self, repo: str, name: str, source: str = "main") -> None:
        if self.flavor == "gitea":
            self.call("POST", f"/repos/{repo}/branches", {"new_branch_name": name, "old_branch_name": source})
            return
        sha = self.call("GET", f"/repos/{repo}/git/ref/heads/{source}")["object"]["sha"]
        self.call("POST", f"/repos/{repo}/git/refs", {"ref": f"refs/heads/{name}", "sha": sha})

    def statuses(self, repo: str, sha: str) -> list[dict[str, Any]]:
        """The commit statuses of ``sha``, newest first."""
        return list(self.call("GET", f"/repos/{repo}/commits/{sha}/statuses"))

    def pin(self, repo: str, number: int) -> None:
        """Pin an issue as a maintainer does: Gitea's pin route, GitHub's GraphQL ``pinIssue``."""
        if self.flavor == "gitea":
            self.call("POST", f"/repos/{repo}/issues/{number}/pin")
            return
        node = self.call("GET", f"/repos/{repo}/issues/{number}")["node_id"]
        mutation = "mutation($id: ID!) { pinIssue(input: {issueId: $id}) { clientMutationId } }"
        answer = self.call("POST", "/graphql", {"query": mutation, "variables": {"id": node}})
        assert "errors" not in answer, answer

    def pinned(self, repo: str) -> list[int]:
        """The numbers of the repository's pinned issues, in pin order: Gitea lists them
        (``GET /issues/pinned``); GitHub has no REST for pins, so through its GraphQL."""
        if self.flavor == "gitea":
            return [int(issue["number"]) for issue in self.call("GET", f"/repos/{repo}/issues/pinned")]
        owner, name = repo.split("/")
        query = """query($owner: String!, $name: String!) {
          repository(owner: $owner, name: $name) { pinnedIssues(first: 3) { nodes { issue { number } } } }
        }"""
        answer = self.call("POST", "/graphql", {"query": query, "variables": {"owner": owner, "name": name}})
        assert "errors" not in answer, answer
        nodes = answer["data"]["repository"]["pinnedIssues"]["nodes"]
        return [int(node["issue"]["number"]) for node in nodes]

    def issues_in(self, repo: str, state: str = "open") -> list[dict[str, Any]]:
        """Every issue (not pull request) in ``state``."""
        return list(self.call("GET", f"/repos/{repo}/issues?state={state}&type=issues&limit=50&per_page=100"))


def signed_delivery(
    url: str,
    event: str,
    payload: bytes,
    *,
    delivery: str | None = None,
    secret: str = SECRET,
    client: httpx2.Client | None = None,
    flavor: str = "github",
) -> httpx2.Response:
    """POST a delivery signed the way `flavor`'s forge signs it to the receiver at `url`."""
    if flavor == "gitea":
        gitea = {
            "X-Gitea-Event": event,
            "X-Gitea-Delivery": delivery or str(uuid.uuid4()),
            "X-Gitea-Signature": sign_sha256(secret, payload),
            "Content-Type": "application/json",
        }
        return (client or httpx2.Client(timeout=30, **PLAIN)).post(
            f"{url}/webhooks/gitea", content=payload, headers=gitea
        )
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": "sha256=" + sign_sha256(secret, payload),
        "Content-Type": "application/json",
    }
    http = client or httpx2.Client(timeout=30, **PLAIN)
    return http.post(f"{url}/webhooks/github", content=payload, headers=headers)


def queue_idle(redis_url: str) -> bool:
    """No job queued or in progress."""
    r = redis.Redis.from_url(redis_url)
    try:
        return jobs_outstanding(r) == 0
    finally:
        r.close()


def settle(sandbox_url: str, redis_url: str, timeout: float = 30.0) -> None:
    """Wait until the sandbox has delivered everything and the workers have done everything,
    twice in a row (a job's writes cause new deliveries)."""
    with httpx2.Client(base_url=sandbox_url, timeout=timeout + 5, **PLAIN) as http:

        def quiet() -> bool:
            idle = http.get("/_sandbox/deliveries/idle", params={"timeout": 5}).json().get("idle")
            return bool(idle) and queue_idle(redis_url)

        def twice() -> bool:
            return quiet() and quiet()

        wait_for(twice, timeout=timeout, what="deliveries and jobs to settle")


def past_this_second() -> None:
    """Wait until the clock has left the current second. The forges compare a `since` window to the second
    (``bot.catchup.comments.updated_since``), so a write in the second a reconcile starts falls inside that
    reconcile's window *and* the next one's; tests comparing incremental runs call this after ``settle``."""
    now = int(time.time())
    wait_for(lambda: int(time.time()) > now, timeout=5, what="the next second")


def dumps(payload: Any) -> bytes:
    return json.dumps(payload).encode()


_CLI_LOCK = threading.Lock()


class _ThreadsOwnStream:
    """``sys.stdout`` (or ``sys.stderr``) while a command runs in a thread: what that thread writes is the
    command's output; what the test's other threads write (the receiver's and the worker's logs) goes where
    it went before."""

    def __init__(self, before: Any, thread: threading.Thread) -> None:
        self.before, self.thread, self.captured = before, thread, io.StringIO()

    def _target(self) -> Any:
        return self.captured if threading.current_thread() is self.thread else self.before

    def write(self, text: str) -> int:
        return int(self._target().write(text))

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.before, name)


# The commands a test may run in its own process (``steward_in_process``): each installs nothing process-wide
# but what that function keeps to the command's thread (its signing keyring, its log set-up).
IN_PROCESS = ("verify", "public-key", "reconcile", "forks", "debug-report")


def _threads_own_keyring(thread: threading.Thread) -> Any:
    """While ``thread`` runs a command: the signing keyring it installs (``steward reconcile`` installs one,
    as a worker does) is that thread's alone. The test's own worker keeps signing with its keyring, whose
    Redis client belongs to the worker's event loop (the command's belongs to the command's loop, and is
    closed when the command ends)."""
    from unittest import mock

    from bot.records import signing

    mine: list[signing.Keyring] = []
    real_install, real_current = signing.install, signing.current

    def install(keyring: signing.Keyring) -> None:
        if threading.current_thread() is thread:
            mine[:] = [keyring]
        else:
            real_install(keyring)

    def current() -> signing.Keyring:
        if threading.current_thread() is thread and mine:
            return mine[0]
        return real_current()

    return mock.patch.multiple(signing, install=install, current=current)


def steward_in_process(argv: Sequence[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """`steward ARGV` with the environment ``env`` (every other ``STEWARD_*`` variable unset), answered as
    ``subprocess.run(..., capture_output=True, text=True)`` answers, but in this process: a new `steward`
    process costs about a second of a core to start (imports), and the suite ran some hundred of them where
    the test is about what a command says and does, not about the process (tests/smoke starts the installed
    `steward` for every command of the README, and tests/unit/test_cli_help each one's --help).

    The command runs on the test's own thread, which runs no event loop (the receiver and the worker run
    theirs on threads of their own), with ``sys.stdout`` and ``sys.stderr`` captured for this thread only,
    its signing keyring its own (``_threads_own_keyring``) and its log set-up left out (``logs_to_stderr``
    and ``logs.configure`` would reconfigure this process's logging): what it prints is captured, what it
    logs is not — a test that reads a command's log lines, or is about successive processes, starts the
    process. The test's timeout bounds it. Only for the commands in ``IN_PROCESS``."""
    from unittest import mock

    from bot.cli import main as cli_main
    from bot.telemetry import logs

    assert argv and argv[0] in IN_PROCESS, f"run `steward {argv[0]}` as a process"
    here = threading.current_thread()
    out, err = _ThreadsOwnStream(sys.stdout, here), _ThreadsOwnStream(sys.stderr, here)
    kept = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    with (
        _CLI_LOCK,
        mock.patch.dict(os.environ, {**kept, **env}, clear=True),
        mock.patch.object(cli_main, "logs_to_stderr", lambda: None),
        mock.patch.object(logs, "configure", lambda *_, **__: None),
        _threads_own_keyring(here),
        mock.patch.object(sys, "stdout", out),
        mock.patch.object(sys, "stderr", err),
    ):
        try:
            code = cli_main.main(list(argv))
        except SystemExit as exc:  # argparse's answer to bad arguments
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(
        ["steward", *argv], code, out.captured.getvalue(), err.captured.getvalue()
    )


def reconcile_env(settings: Any, **extra: str) -> dict[str, str]:
    """The environment `steward reconcile` runs with against the sandbox and Redis of ``settings``."""
    return {
        "STEWARD_REDIS_URL": settings.redis_url,
        "STEWARD_GITHUB_API_URL": settings.github_api_url,
        "STEWARD_GITHUB_TOKEN": "tok-bot",
        "STEWARD_GITEA_URL": str(settings.gitea_url),
        "STEWARD_GITEA_TOKEN": "tok-bot",
        "STEWARD_RETRY_BASE_DELAY": "0.05",
        "STEWARD_LOG_LEVEL": "warning",
        "STEWARD_RECONCILE_QUOTA_FLOOR": "0",  # the sandbox's hourly quota is shared by the whole session
        "STEWARD_RECONCILE_INSTALLED": "false",  # the session's sandbox holds every test's repositories
        **extra,
    }


def reconcile_command(
    settings: Any, *args: str, env: Mapping[str, str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """The command line and whole environment of `steward reconcile ARGS` started as a process of its own
    (``reconcile_env`` with ``env`` over it, no other ``STEWARD_*`` variable)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    argv = [sys.executable, "-m", "bot.cli", "reconcile", *args]
    return argv, {**clean, **reconcile_env(settings, **(env or {}))}


def reconcile(
    settings: Any, *args: str, env: Mapping[str, str] | None = None, process: bool = False
) -> subprocess.CompletedProcess[str]:
    """`steward reconcile ARGS` as an operator runs it, against the sandbox and Redis of ``settings`` (with
    ``env`` over its environment): in this process (``steward_in_process``), or as a process of its own with
    ``process`` — for a test that reads the command's log lines or is about successive processes."""
    if not process:
        return steward_in_process(["reconcile", *args], reconcile_env(settings, **(env or {})))
    argv, whole = reconcile_command(settings, *args, env=env)
    return subprocess.run(argv, env=whole, cwd=ROOT, capture_output=True, text=True, timeout=180)

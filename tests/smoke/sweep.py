"""The commands of the README's table, run as a maintainer would on a fresh repository, and what counts as
answered: Steward reacted to the comment (👀, 👍 or 😕) and replied to it — or 👍 with nothing to say —
never "I don't know the command" nor "does not work on" (README, "What you will see")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.records import sticky
from tests.e2e.stack import SECRET, ForgeUser, settle

ROOT = Path(__file__).resolve().parents[2]

# One invocation per command of the README's table (the arguments its usage asks for). A command added to
# the table without one here fails `test_every_command_in_the_table_has_an_invocation`.
INVOCATIONS = {
    "help": "help",
    "ping": "ping",
    "refresh": "refresh",
    "config": "config",
    "refine": "refine",
    "answer": "answer Q1 Only the export to CSV.",
    "enough": "enough",
    "approve-spec": "approve-spec keep",
    "edit-spec": "edit-spec",
    "cancel-refine": "cancel-refine",
    "gate": "gate",
    "ratify": "ratify The extra click is the price of the confirmation step.",
    "decide": "decide F1 Use CSV.",
    "reopen-fork": "reopen-fork F1 We need JSON too.",
    "drop-fork": "drop-fork F1 Not a question any more.",
    "red-proof": "red-proof ok",
    "init": "init",
    "bugfix": "bugfix",
    "review": "review clean",
    "disposition": "disposition R1 fix It is real.",
    "accept-gap": "accept-gap The test cannot fail on CI.",
    "scope": "scope The rates module is where the discount is lost.",
    "hypothesis": "hypothesis Off by one: the loop in app.py:3 stops early",
    "evidence": "evidence H1 for app.py:3 reads past the end",
    "confirm": "confirm H1 app.py:3 reads past the end",
    "refute": "refute H1 the loop is fine",
    "inconclusive": "inconclusive H1 cannot reproduce",
    "resume-debug": "resume-debug Look at the parser first.",
    "rank": "rank H1 1",
    "close": "close not-planned The export moved to the API.",
    "reopen": "reopen",
    "duplicate": "duplicate #1",
    "claim": "claim",
    "assign": "assign @maintainer",
    "unassign": "unassign",
    "hold": "hold Waiting for the release.",
    "unhold": "unhold",
    "label": "label bug",
    "cc": "cc @outsider",
}


@dataclass(frozen=True)
class Row:
    name: str
    on_issues: bool
    on_pulls: bool


def readme_table() -> list[Row]:
    """The README's generated command table (`make docs`): each command and where it works."""
    readme = (ROOT / "README.md").read_text()
    table = readme.split("<!-- commands:start", 1)[1].split("<!-- commands:end -->", 1)[0]
    rows = []
    for line in table.splitlines():
        found = re.match(r"^\| `/steward ([a-z-]+)[^`]*` \| .* \| ([a-z, ]+) \| [^|]+ \|$", line)
        if found:
            where = found[2]
            rows.append(Row(found[1], "issues" in where, "pull requests" in where))
    return rows


def new_repository(user: ForgeUser, receiver_url: str) -> str:
    """A repository as the README sets one up: the bot a collaborator (write on GitHub, admin on Gitea),
    a signed webhook to the receiver, and a configuration file without the per-person command limit (the
    sweep runs two dozen commands in a minute; the limit has its own tests)."""
    repo = user.create_repo()
    user.add_collaborator(repo, "steward-bot", "admin" if user.flavor == "gitea" else "push")
    user.add_hook(repo, f"{receiver_url}/webhooks/{user.flavor}", SECRET)
    folder = ".gitea" if user.flavor == "gitea" else ".github"
    user.put_file(repo, f"{folder}/steward.yml", "limits:\n  commands_per_minute: 0\n")
    # The code the debug commands' evidence points at (`app.py:3` must exist: evidence is checked).
    user.put_file(repo, "app.py", "def walk(items):\n    for i in range(len(items) - 1):\n        yield i\n")
    return repo


def bot_replies(user: ForgeUser, repo: str, number: int) -> list[dict[str, Any]]:
    return [c for c in user.comments(repo, number) if c["user"]["login"] == "steward-bot"]


def answers(body: str, comment_id: int) -> bool:
    """Whether a comment of Steward's is its answer to the command comment ``comment_id``: keyed by it,
    whatever its kind — a plain reply (`reply`), or one that is also a signed record (`/close` answers with
    its `closed` record, which `/reopen` reads back)."""
    found = sticky.marker_of(body)
    return found is not None and found[1].startswith(f"{comment_id}-")


def unanswered(
    user: ForgeUser, repo: str, posted: dict[str, tuple[int, int]], replies: list[dict[str, Any]]
) -> dict[str, str]:
    """Each posted command (name → (thread, comment id)) that was not answered, with why."""
    problems = {}
    for name, (number, comment_id) in posted.items():
        reactions = user.reactions(repo, comment_id)
        own = [r["body"] for r in replies if answers(r["body"], comment_id)]
        if not {"eyes", "+1", "confused"} & set(reactions):
            problems[name] = f"no reaction on #{number}'s comment {comment_id} (reactions: {reactions})"
        elif not own and "+1" not in reactions:
            problems[name] = f"no reply and no 👍 on #{number} (reactions: {reactions})"
        elif any("I don't know the command" in text or "does not work on" in text for text in own):
            problems[name] = f"answered as unknown or misplaced: {own}"
    return problems


def sweep(
    user: ForgeUser,
    outsider: ForgeUser,
    sandbox_url: str,
    redis_url: str,
    receiver_url: str,
    rows: list[Row],
) -> None:
    """Run every command of ``rows`` (one comment each: on an issue where it works on issues, else on a pull
    request), and an outsider's refused `/steward refresh`; fail with every command not answered."""
    repo = new_repository(user, receiver_url)
    issue = user.open_issue(repo, "Export the report as CSV", "Users want the monthly report as a CSV file.")
    pull = user.open_pull(repo, "Add the CSV export", "csv-export")
    settle(sandbox_url, redis_url, 60)
    posted = {}
    for row in rows:
        number = issue if row.on_issues else pull
        posted[row.name] = (number, user.comment(repo, number, f"/steward {INVOCATIONS[row.name]}"))
    refused = outsider.comment(repo, issue, "/steward refresh")
    settle(sandbox_url, redis_url, 120)
    replies = bot_replies(user, repo, issue) + bot_replies(user, repo, pull)
    problems = unanswered(user, repo, posted, replies)
    assert problems == {}, f"commands not answered on {user.flavor}: {problems}"
    # README: "a command you may not run gets 😕 and a reply that says who may run it and what your
    # access is".
    assert "confused" in user.reactions(repo, refused), "the refusal has no 😕"
    (refusal,) = [r["body"] for r in replies if f"<!-- steward:reply:{refused}-" in r["body"]]
    assert "@outsider: `/steward refresh` can only be run by people with" in refusal, refusal
    assert "your access to this repository is `read`" in refusal, refusal

"""The bug's record comment (its data block: the branch, the test, the budgets, the pull requests), the labels
Steward keeps on bugs, and finding the bug a bugfix branch or pull request belongs to."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.config.settings import BugfixSettings
from bot.forge import Comment, PullRequest
from bot.records import sticky
from handlers.bugfix.gate import ShownCode, bug_of_branch
from handlers.bugfix.ledger import Budgets, Event, event_to_json
from handlers.bugfix.regression_slot import code_digest
from handlers.bugfix.render import Opened, branch_url, record_text

RECORD_KIND = "bugfix"
LEDGER_KIND = "bugfix-ledger"
EXHAUSTED_KIND = "bugfix-exhausted"
SUMMARY_KIND = "bugfix-summary"
OPEN_LABEL = "bugfix:open"
GAP_LABEL = "bugfix:disclosed-gap"
EXHAUSTED_LABEL = "bugfix:budget-exhausted"
MERGED_LABEL = "bugfix:merged"
UNPROVEN_LABEL = "bugfix:merged-unproven"
LABELS: Mapping[str, tuple[str, str]] = {
    OPEN_LABEL: ("1d76db", "Steward: a regression-first bugfix branch is open"),
    GAP_LABEL: ("fbca04", "Steward: the fix has a disclosed gap instead of red proof"),
    EXHAUSTED_LABEL: ("d73a4a", "Steward: the review budget is exhausted; a person must decide"),
    MERGED_LABEL: ("0e8a16", "Steward: the fix was merged with its regression proof in order"),
    UNPROVEN_LABEL: ("d93f0b", "Steward: a bugfix was merged without its proof; the bug stays open"),
}


def settings_of(ctx: EventContext) -> BugfixSettings:
    return ctx.settings.bugfix


def budgets_of(settings: BugfixSettings) -> Budgets:
    b = settings.budgets
    return Budgets(b.review_rounds, b.fix_cycles, b.no_verdict_retries)


# --- the bug's record -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """What the bug's record comment remembers (its data block): the branch, the test, the budgets fixed at
    the first `/bugfix`, and every pull request the bug has had (so a new one reuses the ledger)."""

    branch: str
    base: str
    path: str
    digest: str
    budgets: Budgets
    pulls: tuple[int, ...] = ()
    red: str = ""
    trusted_by: str = ""
    opened_by: str = ""
    # The hypothesis `/bugfix H<n>` chose ("" when none was named).
    hypothesis: str = ""
    # Where the red commit's test file holds the test code it added (its offset and length) and that code's
    # digest (``code_digest``): the code itself is never kept in the data block; it is read back from the
    # red commit (``vouched_in``).
    code_at: int = 0
    code_chars: int = 0
    code_digest: str = ""
    # The test code itself, as a record of an earlier version kept it (read, never written).
    code: str = ""

    def vouched_in(self, red_text: str | None) -> str | None:
        """The test code the red commit added, exactly, read back from its test file (``red_text``); "" when
        the record names none; None when the red commit no longer holds it."""
        if self.code:
            return self.code if red_text is not None and self.code.strip("\n") in red_text else None
        if not self.code_digest:
            return ""
        if red_text is None:
            return None
        piece = red_text[self.code_at : self.code_at + self.code_chars]
        return piece if code_digest(self.path, piece) == self.code_digest else None

    def to_json(self) -> dict[str, Any]:
        return {
            "v": 1,
            "branch": self.branch,
            "base": self.base,
            "path": self.path,
            "digest": self.digest,
            "budgets": self.budgets.to_json(),
            "pulls": list(self.pulls),
            "red": self.red,
            "trusted_by": self.trusted_by,
            "opened_by": self.opened_by,
            "hypothesis": self.hypothesis,
            "code_at": self.code_at,
            "code_chars": self.code_chars,
            "code_digest": self.code_digest,
        }

    @classmethod
    def from_json(cls, raw: Any, default: Budgets) -> Record | None:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("branch"), str):
            return None
        pulls = raw.get("pulls")
        return cls(
            branch=str(raw["branch"]),
            base=str(raw.get("base") or ""),
            path=str(raw.get("path") or ""),
            digest=str(raw.get("digest") or ""),
            budgets=Budgets.from_json(raw.get("budgets"), default),
            pulls=tuple(p for p in pulls if isinstance(p, int))[:50] if isinstance(pulls, list) else (),
            red=str(raw.get("red") or ""),
            trusted_by=str(raw.get("trusted_by") or ""),
            opened_by=str(raw.get("opened_by") or ""),
            hypothesis=str(raw.get("hypothesis") or "")[:10],
            code_at=_count(raw.get("code_at")),
            code_chars=_count(raw.get("code_chars")),
            code_digest=str(raw.get("code_digest") or "")[:64],
            code=str(raw.get("code") or ""),
        )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


async def own_data(ctx: EventContext, comments: Sequence[Comment], kind: str) -> list[Mapping[str, Any]]:
    """The verified data blocks of Steward's own ``kind`` comments in a thread, oldest first (a block whose
    signature does not verify is left out)."""
    return [data async for _, data in _own_signed(ctx, comments, kind)]


async def _own_signed(
    ctx: EventContext, comments: Sequence[Comment], kind: str
) -> AsyncIterator[tuple[Comment, Mapping[str, Any]]]:
    """Steward's own ``kind`` comments in a thread with their verified data blocks, oldest first."""
    head = f"<!-- steward:{kind}:"
    verifier = await ctx.verifier()
    for comment in comments:
        body = comment.body.lstrip()
        if comment.author.casefold() != ctx.me.login.casefold() or not body.startswith(head):
            continue
        marker = sticky.marker_of(body)
        if marker is None:
            continue
        checked = await verifier.comment(comment, marker[0], marker[1], expect_data=False)
        if isinstance(checked.trusted, Mapping):
            yield comment, checked.trusted


async def shown_code(ctx: EventContext, comments: Sequence[Comment], digest: str) -> ShownCode | None:
    """The test code a refusal of Steward's showed with ``digest``: its signed block names the path and the
    digest (never the code), and the code is read back from the refusal's fence, byte for byte — only what a
    reader was shown can be vouched for and committed, and it must hash to the digest."""
    async for comment, data in _own_signed(ctx, comments, "reply"):
        if data.get("bug") != ctx.number:
            continue
        raw = data.get("bugfix-shown")
        if not isinstance(raw, Mapping) or raw.get("digest") != digest:
            continue
        path, tail = raw.get("path"), raw.get("tail", "")
        fenced = unfence(sticky.visible_text(comment.body))
        if not isinstance(path, str) or not isinstance(tail, str) or fenced is None or tail.strip():
            continue
        code = fenced + tail
        if code_digest(path, code) == digest:
            return ShownCode(path, code, digest)
    return None


_FENCE_OPEN = re.compile(r"^ {2}(`{3,})[^`]*$")


def unfence(text: str) -> str | None:
    """The code of the first fence in a refusal (``render.refusal_text``: each line indented by two spaces
    under its list item), exactly as shown; None when there is no closed fence."""
    lines = text.split("\n")
    for start, line in enumerate(lines):
        opened = _FENCE_OPEN.match(line)
        if opened is None:
            continue
        close = "  " + opened.group(1)
        body: list[str] = []
        for row in lines[start + 1 :]:
            if row == close:
                return "\n".join(body)
            if row.startswith("  "):
                body.append(row[2:])
            elif not row.strip():
                body.append("")
            else:
                return None
        return None
    return None


async def find_record(
    ctx: EventContext, comments: Sequence[Comment], number: int
) -> tuple[Comment | None, Record | None]:
    """The bug's bugfix record, when its data block verifies (one that does not is not used: the budgets then
    come from Steward's own signed replies, ``ledger_events``)."""
    comment = sticky.find(list(comments), bot_login=ctx.me.login, kind=RECORD_KIND, key=str(number))
    if comment is None:
        return None, None
    verified = await ctx.record(comment, RECORD_KIND, str(number))
    if verified.broken:
        # Not used; the budgets then come from the signed replies. (No "rebuilt" note: this record is
        # rewritten only when /bugfix next writes it.)
        ctx.log.warning("the bugfix record does not verify; not using it", outcome=verified.outcome)
    return comment, Record.from_json(verified.trusted, budgets_of(settings_of(ctx)))


async def write_record(
    ctx: EventContext, number: int, record: Record, opened: Opened, comments: list[Comment] | None = None
) -> None:
    await ctx.upsert_sticky(
        RECORD_KIND, str(number), record_text(opened), data=record.to_json(), number=number, comments=comments
    )


async def add_label(ctx: EventContext, number: int, name: str, current: Sequence[str]) -> None:
    if any(label.casefold() == name.casefold() for label in current):
        return
    color, description = LABELS[name]
    await ctx.forge.ensure_label(ctx.repo, name, color=color, description=description)
    await ctx.forge.add_labels(ctx.repo, number, [name])


def opened_of(
    ctx: EventContext, number: int, record: Record, pull: PullRequest | None, html_url: str
) -> Opened:
    return Opened(
        number=number,
        branch=record.branch,
        branch_link=branch_url(html_url, record.branch, ctx.event.forge),
        base=record.base,
        path=record.path,
        digest=record.digest,
        pull=pull.number if pull else None,
        pull_link=pull.html_url if pull else "",
        red_sha=record.red,
        trusted_by=record.trusted_by,
    )


async def bugfix_of_branch(ctx: EventContext, branch: str) -> tuple[int, Record] | None:
    """The bug whose record names ``branch`` (a branch merely named like one is not a bugfix branch)."""
    number = bug_of_branch(settings_of(ctx).branch_prefix, branch)
    if number is None:
        return None
    comments = await ctx.forge.list_comments(ctx.repo, number)
    _, record = await find_record(ctx, comments, number)
    if record is None or record.branch != branch:
        return None
    return number, record


async def adopt(ctx: EventContext, number: int, record: Record, pull: PullRequest) -> Record:
    """A pull request of the bug's branch that the record does not list yet joins it (the ledger carries
    on)."""
    if pull.number in record.pulls:
        return record
    record = replace(record, pulls=(*record.pulls, pull.number))
    repository = await ctx.forge.get_repo(ctx.repo)
    await write_record(ctx, number, record, opened_of(ctx, number, record, pull, repository.html_url))
    return record


# --- commands on the pull request -------------------------------------------------------------------------


async def bugfix_pull(ctx: CommandContext) -> tuple[PullRequest, int, Record]:
    pull = await ctx.forge.get_pull_request(ctx.repo, ctx.number)
    # Matched by head repository id, not by branch name: a fork's `bugfix/42-…` is not bug 42's.
    found = None if pull.from_fork else await bugfix_of_branch(ctx, pull.head_ref)
    if found is None:
        raise CommandError(
            f"this pull request is not a bugfix branch Steward opened. Run `/{ctx.prefix} bugfix` on the bug "
            "first."
        )
    number, record = found
    if pull.state != "open":
        raise CommandError("this pull request is closed: the ledger takes commands on the open one.")
    return pull, number, await adopt(ctx, number, record, pull)


async def record_reply(ctx: CommandContext, number: int, event: Event, text: str) -> None:
    """The command's reply, carrying the accepted event: the ledger is re-derived from these."""
    await ctx.upsert_sticky(
        "reply", ctx.reply_key, text, data={"bug": number, "bugfix": event_to_json(event)}
    )
    ctx.replied = True


def recorded(events: Sequence[Event], comment_id: int, kind: type) -> Event | None:
    return next((e for e in events if e.comment_id == comment_id and isinstance(e, kind)), None)

"""`/bugfix` on a bug: the gate, then the record, the branch with its red commit, the draft pull request and
the label, each found before it is made (a second run finds them all and says so)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.commands.context import CommandContext, CommandError, EventContext
from bot.commands.permissions import PermissionsUnreadable
from bot.forge import Comment, FileChange, Issue, PermissionDenied, permission_at_least
from bot.records import sticky
from handlers.bugfix import other_capabilities
from handlers.bugfix.effects import sync_pull
from handlers.bugfix.gate import (
    SHOWS_CODE,
    TEST_TOO_LONG,
    BugfixRequest,
    GateInput,
    Refusal,
    branch_name,
    check_gate,
    pull_title,
    red_message,
    valid_branch,
)
from handlers.bugfix.record import (
    OPEN_LABEL,
    Record,
    add_label,
    budgets_of,
    find_record,
    opened_of,
    settings_of,
    shown_code,
    write_record,
)
from handlers.bugfix.regression_slot import (
    RegressionSlot,
    code_digest,
    parse_slot,
    recipe_part,
    slot_writer,
    with_test,
)
from handlers.bugfix.render import branch_url, pull_body, refusal_text


async def _author_can_write(ctx: EventContext, author: str) -> bool:
    try:
        level = await ctx.forge.permission_of(ctx.repo, author)
    except PermissionDenied:
        raise PermissionsUnreadable(ctx.repo) from None
    return permission_at_least(level, "write")


# Room for the signature line, which is written after the body is fitted.
SIGNATURE_ROOM = 250


async def _refuse(ctx: CommandContext, refusals: Sequence[Refusal], slot: RegressionSlot) -> None:
    """The gate's refusal. One that shows the issue's test code keeps the exact path and code it showed
    (what `--trust-test` can vouch for) and is a new comment whenever the code shown differs: a refusal a
    maintainer may have read is never edited to show other code."""
    text = f"@{ctx.actor}: {refusal_text(refusals)}"
    if not any(r.code in SHOWS_CODE for r in refusals) or slot.path is None or slot.code is None:
        raise CommandError(refusal_text(refusals))
    digest = code_digest(slot.path, slot.code)
    # The signed block keeps the path and the digest, never the code: the code is what the fence shows, read
    # back from it at the vouch (``shown_code``), and only the trailing blanks a fence cannot show are kept.
    tail = slot.code[len(slot.code.rstrip()) :]
    data = {"bug": ctx.number, "bugfix-shown": {"path": slot.path, "digest": digest, "tail": tail}}
    if len(sticky.render("reply", "x" * 40, text, data)) + SIGNATURE_ROOM > sticky.MAX_CHARS:
        # Test code shown for a vouch is never shrunk: what cannot be shown whole is not shown at all.
        raise CommandError(
            f"The test code for `{slot.path}` is too long to show whole in one comment "
            f"({len(slot.code):,} characters): I never cut test code shown for a vouch, since a reviewer "
            "must read all of what is committed. Shorten the test in section 7 (a regression test needs one "
            f"case), then run the command again. <sub>`{TEST_TOO_LONG}`</sub>"
        )
    await ctx.react("confused")
    await ctx.upsert_sticky("reply", f"{ctx.reply_key}-{digest[:16]}", text, data=data)
    ctx.replied = True


async def start_bugfix(ctx: CommandContext, request: BugfixRequest) -> None:
    """`/bugfix`: the gate, then (each step found before it is made) the record, the branch with its red
    commit, the draft pull request, the label; a second run finds them all and says so."""
    forge, repo, number = ctx.forge, ctx.repo, ctx.number
    settings = settings_of(ctx)
    issue = await forge.get_issue(repo, number)
    comments = await forge.list_comments(repo, number)
    _, record = await find_record(ctx, comments, number)
    repository = await forge.get_repo(repo)
    if record is not None and await forge.get_branch(repo, record.branch) is not None:
        await _resume(ctx, issue, record, repository.html_url, comments)
        return
    slot = parse_slot(issue.body)
    verdict = await other_capabilities.refinement_verdict(ctx, comments, number=number)
    is_story, story_refused = await other_capabilities.story(ctx, comments, number=number, prefix=ctx.prefix)
    # The bug as its verdict reads it, comment answers in.
    bug = await other_capabilities.bug_read(ctx, issue, comments)
    root = await other_capabilities.root_cause(ctx, repo, issue, request.hypothesis, bug)
    shown = await shown_code(ctx, comments, request.trust_digest) if request.trust_digest else None
    author_can_write = await _author_can_write(ctx, issue.author)
    # Who wrote section 7, for the refusal to say, read only when an outsider's code will be refused.
    versions = None
    if not author_can_write and request.trust_digest is None and slot.code is not None:
        versions = await forge.body_versions(repo, number)
    result = check_gate(
        GateInput(
            verdict=verdict.status if verdict else None,
            blockers=verdict.blockers if verdict else (),
            slot=slot,
            test_globs=settings.test_globs,
            author=issue.author,
            author_can_write=author_can_write,
            trust_digest=request.trust_digest,
            unresolved_forks=await other_capabilities.unresolved_forks(ctx, repo, number),
            root_cause=root,
            prefix=ctx.prefix,
            shown=shown,
            # Vouching has a floor configuration cannot lower: `commands.bugfix` may let triage run
            # `/bugfix`, never vouch.
            voucher_can_write=await _author_can_write(ctx, ctx.actor) if request.trust_digest else True,
            max_test_chars=settings.max_test_chars,
            is_story=is_story,
            story_refusal=story_refused,
            slot_writer=slot_writer(issue.author, issue.body, versions),
            edit_history=versions is not None,
        )
    )
    if not result.passed:
        await _refuse(ctx, result.refusals, slot)
        return
    assert slot.path is not None and slot.code is not None and slot.digest is not None
    # Vouched code is committed as it was shown (equal to the issue's now: the gate compared the digests).
    code = shown.code if shown is not None else slot.code
    base = request.base or (record.base if record else "") or repository.default_branch
    if not valid_branch(base) or await forge.get_branch(repo, base) is None:
        raise CommandError(
            f"there is no branch `{base}` to start from. Name an existing one: `--base <branch>`."
        )
    branch = record.branch if record else branch_name(settings.branch_prefix, number, issue.title)
    if record is None and await forge.get_branch(repo, branch) is not None:
        # Steward writes its record before the branch, so a branch without one was made by someone else.
        raise CommandError(
            f"a branch `{branch}` exists already and is not a bugfix branch Steward opened. Delete or rename "
            f"it, then run `/{ctx.prefix} bugfix` again."
        )
    existing = await forge.read_file(repo, slot.path, ref=base)
    content = with_test(existing.content.decode("utf-8", "replace") if existing else None, code)
    added = code.strip("\n")
    record = Record(
        branch=branch,
        base=base,
        path=slot.path,
        digest=slot.digest,
        code_at=max(0, content.find(added)),
        code_chars=len(added),
        code_digest=code_digest(slot.path, added),
        # Budgets belong to the bug, fixed at its first /bugfix: a later configuration does not raise them.
        budgets=record.budgets if record else budgets_of(settings),
        pulls=record.pulls if record else (),
        trusted_by=ctx.actor if request.trust_digest else "",
        opened_by=ctx.actor,
        hypothesis=request.hypothesis or (record.hypothesis if record else ""),
    )
    # The record first: a job killed after this finds it (and the budgets) on the next run.
    await write_record(
        ctx, number, record, opened_of(ctx, number, record, None, repository.html_url), comments
    )
    red = await forge.commit_files(
        repo,
        base=base,
        branch=record.branch,
        files=[FileChange(slot.path, content.encode("utf-8"))],
        message=red_message(number, root.hypothesis),
    )
    record = replace(record, red=red.sha)
    await _resume(ctx, issue, record, repository.html_url, None, fresh=True, hypothesis=root.hypothesis)


async def _resume(
    ctx: CommandContext,
    issue: Issue,
    record: Record,
    html_url: str,
    comments: list[Comment] | None,
    *,
    fresh: bool = False,
    hypothesis: str | None = None,
) -> None:
    """The branch exists: find or open its pull request, bring the record and the label up to date, reply."""
    forge, repo, number = ctx.forge, ctx.repo, issue.number
    for previous in reversed(record.pulls):
        earlier = await forge.get_pull_request(repo, previous)
        if earlier.merged:
            await ctx.reply(
                f"This bug's fix was merged already in #{earlier.number} (branch `{record.branch}`): nothing "
                "to do."
            )
            return
    pull = await forge.find_pull_request(repo, record.branch)
    opened_now = pull is None
    if pull is None:
        pull = await forge.open_pull_request(
            repo,
            head=record.branch,
            base=record.base,
            title=pull_title(number, issue.title),
            body=pull_body(
                number,
                recipe_part(bug := await other_capabilities.bug_read(ctx, issue, comments), "5.3"),
                other_capabilities.hypothesis_of(bug) if hypothesis is None else hypothesis,
                record.path,
            ),
            draft=True,
        )
    if pull.number not in record.pulls:
        record = replace(record, pulls=(*record.pulls, pull.number))
    evidence = await sync_pull(ctx, pull, number, record)
    record = replace(record, red=evidence.red_sha or record.red)
    await write_record(ctx, number, record, opened_of(ctx, number, record, pull, html_url), comments)
    await add_label(ctx, number, OPEN_LABEL, issue.labels)
    link = (
        f"[`{record.branch}`]({branch_url(html_url, record.branch, ctx.event.forge)})"
        if html_url
        else f"`{record.branch}`"
    )
    if fresh:
        # The record comment just written says it all (branch, pull request, what comes next): a reply
        # beside it would say the same twice. The command gets its 👍.
        pass
    elif opened_now:
        await ctx.reply(
            f"The bugfix branch {link} exists already; I opened the draft pull request #{pull.number} for "
            "it. The bug's review ledger and budget carry on from before."
        )
    else:
        await ctx.reply(
            f"The bugfix branch {link} and its pull request #{pull.number} exist already: nothing new was "
            "written. Push the fix to the branch; the pull request's ledger says what is missing next."
        )

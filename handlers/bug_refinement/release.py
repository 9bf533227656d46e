"""A story that leaves its bug: GitHub's `sub_issue_removed` on a bug whose sub-issue Steward stamped or
refined as one of its stories (issue 36 §4 gave a sub-issue attached to a bug the bug's stories' place), or
an edit of the bug that takes it off the bug's ``## Stories`` list (both forges).

Unless it is still one of the bug's stories (a sub-issue, or listed by the bug's author:
``plan.select_stories``), the issue is released: Steward's refinement labels leave it, and its story comment
for that bug becomes a short note that it is no longer a story of the bug — so ``story_gate`` no longer finds
a story record there, and work on it is no longer held back as a story's. The labels go first: a job cut
short after them finds the story comment on its next run and finishes; a replay of a finished release finds
only the note, and writes nothing. Attached again, it is stamped again with a new story comment
(``stamp_stories``)."""

from __future__ import annotations

from collections.abc import Iterable

from bot.commands.context import EventContext
from bot.forge import Issue, ThreadLocked
from bot.records import sticky
from bot.records.sticky import find
from handlers.bug_refinement.document import parse_document
from handlers.bug_refinement.effects import STORY_KIND, refinement_settings, stories_of
from handlers.bug_refinement.render import Released, render_story_released
from handlers.bug_refinement.rules import story_language

RELEASED_KIND = "ra9-story-released"


async def release_stories(
    ctx: EventContext, bug: Issue, numbers: Iterable[int], *, why: Released
) -> list[int]:
    """Release each issue of ``numbers`` from ``bug``'s stories, unless it is still one of them (the bug's
    stories are read once for all); ``why``: it was removed from the bug's sub-issues, from its ``## Stories``
    list, or both (the catch-up cannot tell). Returns those that had something left to release (the story
    comment, or labels after a cut-short run)."""
    chosen, _ = await stories_of(ctx, bug)
    still = {story.number for story in chosen}
    return [n for n in numbers if n not in still and await _release(ctx, bug, n, why)]


async def _release(ctx: EventContext, bug: Issue, number: int, why: Released) -> bool:
    settings = refinement_settings(ctx)
    async with ctx.holding(number):
        comments = await ctx.forge.list_comments(ctx.repo, number)
        me, key = ctx.me.login, str(bug.number)
        story_comment = find(comments, bot_login=me, kind=STORY_KIND, key=key)
        if story_comment is None and find(comments, bot_login=me, kind=RELEASED_KIND, key=key) is None:
            return False  # never a story of this bug here
        story = await ctx.forge.get_issue(ctx.repo, number)
        for name in settings.verdict_labels():
            if story.has_label(name):
                await ctx.forge.remove_label(ctx.repo, number, name)
        if story_comment is None:
            return True
        language = story_language(parse_document(story.body))
        text = render_story_released(f"#{bug.number}", settings.refine_label, language, why)
        try:
            await ctx.forge.edit_comment(ctx.repo, story_comment.id, sticky.render(RELEASED_KIND, key, text))
        except ThreadLocked as exc:
            ctx.note_locked(number, exc)
    ctx.log.info("story released", bug=bug.number, story=number)
    return True

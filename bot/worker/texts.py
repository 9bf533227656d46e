"""The whole text of an event the receiver cut (``bot.events.event.Event.trimmed``, issue 40 item 5)."""

from __future__ import annotations

import dataclasses

from bot.events.event import CUT, Event
from bot.forge import Forge, NotFound


async def whole(forge: Forge, event: Event) -> Event:
    """An event whose long texts the receiver cut (``Event.trimmed``), with the issue and the comment read
    again from the forge: handlers, digests and records see the whole text."""
    assert event.repo is not None
    cut = set(str(event.extra.get(CUT, "")).split(","))
    issue, comment = event.issue, event.comment
    try:
        if "issue" in cut and issue is not None:
            found = await forge.get_issue(event.repo, issue.number)
            issue = dataclasses.replace(issue, body=found.body)
        if "comment" in cut and comment is not None:
            again = await forge.get_comment(event.repo, comment.id)
            comment = dataclasses.replace(comment, body=again.body)
    except NotFound:
        pass  # gone since: the handlers find it gone too
    return dataclasses.replace(event, issue=issue, comment=comment)

"""The juror (``fork_status``) as a table of outcomes: resolved, open, claimed and every reason for
invalid; superseding and reopening; ignored records; what the data block can and cannot do."""

from __future__ import annotations

from bot.forge import Comment, Issue
from handlers.forks.juror import RecordedRecord, Source, Verdict, fork_status, record_hash
from handlers.forks.render import Hints, data_block, recorded_from, render_comment

BODY = "## Open forks\n- [ ] F1: Postgres or SQLite?\n- [ ] F2: REST or gRPC?\n"
ISSUE = Issue(1, "Storage", BODY, "open", "alice")
PEOPLE = {"maria": "write", "bob": "admin", "eve": "read", "alice": "read"}
URL = "https://forge.test/o/r/issues/2#issuecomment-500"
T0, T1 = "2026-01-01T10:00:00Z", "2026-01-01T10:05:00Z"
T2, T3 = "2026-01-01T10:10:00Z", "2026-01-01T10:20:00Z"


def c(cid: int, author: str, body: str, at: str = T1, updated: str = "") -> Comment:
    url = f"https://forge.test/o/r/issues/1#issuecomment-{cid}"
    return Comment(cid, author, body, at, updated or at, url, 1)


def judge(comments: list[Comment], issue: Issue = ISSUE, **kw: object) -> Verdict:
    return fork_status(issue, comments, PEOPLE, **kw)  # type: ignore[arg-type]


def test_no_record_open_and_a_ticked_box_is_only_a_claim() -> None:
    issue = Issue(1, "t", "## Forks\n- [ ] F1: a\n- [x] F2: b — resolved: yes\n", "open", "alice")
    verdict = judge([], issue)
    assert [(f.id, f.status) for f in verdict.forks] == [("F1", "open"), ("F2", "claimed")]
    assert "no provenance" in verdict.forks[1].reason
    assert verdict.unresolved == ("F1", "F2")


def test_a_decide_in_the_thread_resolves_with_provenance() -> None:
    decision = c(10, "maria", "/decide F1 Postgres\nbecause of JSONB")
    verdict = judge([decision])
    fork = verdict.forks[0]
    assert fork.status == "resolved"
    assert fork.record is not None
    assert (fork.record.decider, fork.record.url, fork.record.decided_at) == ("maria", decision.html_url, T1)
    assert fork.record.hash == record_hash(
        "F1",
        "Postgres",
        10,
        "maria",
        T1,
        decision.body,
        question="Postgres or SQLite?",
        quote="/decide F1 Postgres because of JSONB",
    )
    assert fork.body_lags
    assert verdict.unresolved == ("F2",)


def test_a_decide_by_someone_who_may_not_decide_is_ignored() -> None:
    verdict = judge([c(10, "maria", "/decide F1 Postgres", T1), c(11, "eve", "/decide F1 SQLite", T2)])
    assert verdict.forks[0].status == "resolved"
    assert verdict.forks[0].record is not None and verdict.forks[0].record.text == "Postgres"
    assert [r.state for r in verdict.stray] == ["ignored"]


def test_a_bare_decision_comment_resolves_nothing() -> None:
    assert judge([c(10, "bob", "decision: F1 Postgres")]).forks[0].status == "open"


def test_commands_in_code_or_quotes_and_the_bots_own_comments_do_not_count() -> None:
    comments = [
        c(10, "bob", "`/decide F1 Postgres`\n\n> /decide F1 Postgres"),
        c(11, "steward-bot", "/decide F1 Postgres"),
    ]
    assert judge(comments, bot_login="steward-bot").forks[0].status == "open"


def test_a_source_record_checks_its_source() -> None:
    source = Comment(500, "bob", "After the call: we go with **Postgres**, final.", T0, T0, URL, 2)
    recorder = c(10, "maria", f"/decide F1 postgres --source {URL}", T1)
    verdict = judge([recorder], sources={URL: Source(URL, source, 2, URL)})
    fork = verdict.forks[0]
    assert fork.status == "resolved" and fork.record is not None
    assert (fork.record.decider, fork.record.recorder, fork.record.url) == ("bob", "maria", URL)
    assert fork.record.quote == source.body  # one sentence: the source is the quote
    assert fork.record.hash == record_hash(
        "F1", "postgres", 500, "bob", T0, source.body, question="Postgres or SQLite?", quote=source.body
    )


def _source_case(source: Source) -> tuple[str, str]:
    recorder = c(10, "maria", f"/decide F1 Postgres --source {URL}", T1)
    fork = judge([recorder], sources={URL: source}).forks[0]
    return fork.status, fork.reason


def test_every_way_a_source_record_is_invalid() -> None:
    good = Comment(500, "bob", "Postgres it is", T0, T0, URL, 2)
    assert _source_case(Source(URL, Comment(500, "eve", "Postgres it is", T0, T0, URL, 2), 2, URL)) == (
        "invalid",
        "the deciding comment's author @eve may not decide",
    )
    status, reason = _source_case(Source(URL, Comment(500, "bob", "SQLite it is", T0, T0, URL, 2), 2, URL))
    assert status == "invalid" and "quote mismatch" in reason
    status, reason = _source_case(Source(URL, None))
    assert status == "invalid" and "deleted" in reason
    status, reason = _source_case(Source(URL, problem="'x' is not a link on this forge (y)", foreign=True))
    assert status == "invalid" and "another forge" in reason
    status, reason = _source_case(Source(URL, problem="a review comment on a diff"))
    assert status == "invalid" and "review comment" in reason
    edited = Comment(500, "bob", "Postgres it is", T0, T2, URL, 2)
    status, reason = _source_case(Source(URL, edited, 2, URL))
    assert status == "invalid" and "edited after the record" in reason
    # Edited before it was recorded: the record is of the comment as it then was.
    earlier = Comment(500, "bob", "Postgres it is", T0, "2026-01-01T10:02:00Z", URL, 2)
    assert _source_case(Source(URL, earlier, 2, URL))[0] == "resolved"
    assert _source_case(Source(URL, good, 2, URL))[0] == "resolved"


def test_an_edited_decide_comment_is_invalid() -> None:
    fork = judge([c(10, "maria", "/decide F1 Postgres", T1, updated=T2)]).forks[0]
    assert fork.status == "invalid" and "edited after the record" in fork.reason


def test_an_edit_within_the_same_second_is_caught_by_the_recorded_hash() -> None:
    first = judge([c(10, "maria", "/decide F1 Postgres", T1)])
    remembered = recorded_from(data_block(first, {}))
    fork = judge([c(10, "maria", "/decide F1 Postgres, or maybe not", T1)], recorded=remembered).forks[0]
    assert fork.status == "invalid" and "no longer hashes" in fork.reason


def test_a_deleted_decide_comment_is_invalid_when_steward_had_seen_it() -> None:
    remembered = recorded_from(data_block(judge([c(10, "maria", "/decide F1 Postgres", T1)]), {}))
    fork = judge([], recorded=remembered).forks[0]
    assert fork.status == "invalid" and "deleted" in fork.reason
    # Without Steward's memory the record is simply gone: never resolved.
    assert judge([]).forks[0].status == "open"


def test_the_data_block_never_resolves_a_fork() -> None:
    forged = {"99:decide:0": RecordedRecord("99:decide:0", "F1", "0" * 64, T1, "Postgres", "bob", "")}
    assert judge([], recorded=forged).forks[0].status == "invalid"


def test_a_later_record_supersedes_and_a_reopening_reopens_keeping_history() -> None:
    comments = [
        c(10, "maria", "/decide F1 Postgres", T1),
        c(11, "bob", "/decide F1 SQLite", T2),
    ]
    fork = judge(comments).forks[0]
    assert fork.status == "resolved" and fork.record is not None and fork.record.text == "SQLite"
    assert [r.text for r in fork.history] == ["Postgres"]
    fork = judge([*comments, c(12, "bob", "/reopen-fork F1 benchmarks changed", T3)]).forks[0]
    assert fork.status == "open" and fork.reason == "reopened by @bob: benchmarks changed"
    assert [r.text for r in fork.history] == ["Postgres", "SQLite"]


def test_a_later_invalid_record_makes_the_fork_invalid() -> None:
    comments = [
        c(10, "maria", "/decide F1 Postgres", T1),
        c(11, "bob", f"/decide F1 SQLite --source {URL}", T2),
    ]
    fork = judge(comments, sources={URL: Source(URL, None)}).forks[0]
    assert fork.status == "invalid"


def test_author_permission_lets_the_issue_author_decide() -> None:
    comments = [c(10, "alice", "/decide F1 Postgres")]
    assert judge(comments, required="author").forks[0].status == "resolved"
    assert judge(comments).forks[0].status == "open"


def test_a_record_for_an_unlisted_fork_is_stray() -> None:
    verdict = judge([c(10, "maria", "/decide F9 Postgres")])
    assert [r.fork for r in verdict.stray] == ["F9"]


def test_the_comment_shows_the_table_the_lag_and_the_history() -> None:
    comments = [c(10, "maria", "/decide F1 Postgres", T1), c(11, "bob", "/decide F1 SQLite", T2)]
    text = render_comment(judge(comments), Hints())
    assert text.startswith("**Next step: settle F2**")
    assert "| **F1** | Postgres or SQLite? | ✅ resolved | SQLite |  | @bob |" in text
    assert "**Body lags:** F1 is listed open in the description; resolved by @bob in [this comment](" in text
    assert "superseded" in text and "Postgres" in text
    done = Issue(1, "t", "## Forks\n- [x] F1: a\n", "open", "alice")
    assert render_comment(judge([c(10, "maria", "/decide F1 Postgres")], done), Hints()).startswith(
        "**Nothing to do: the design fork is resolved**"
    )


def test_history_is_bounded() -> None:
    comments = [
        c(i, "maria", f"/decide F1 choice {i} " + "x" * 900, f"2026-01-01T10:{i // 60:02d}:{i % 60:02d}Z")
        for i in range(1, 300)
    ]
    text = render_comment(judge(comments), Hints())
    assert len(text) < 60_000
    assert "older entries" in text


def test_reopening_needs_its_own_permission() -> None:
    comments = [c(10, "maria", "/decide F1 Postgres", T1), c(11, "maria", "/reopen-fork F1 why not", T2)]
    assert judge(comments).forks[0].status == "open"
    assert judge(comments, reopen_required="admin").forks[0].status == "resolved", "maria has write only"


def test_labels_mirror_the_verdict() -> None:
    from handlers.forks.effects import labels_wanted

    assert labels_wanted(judge([]), "forks:open", "forks:resolved") == ("forks:open",)
    both = [c(10, "maria", "/decide F1 Postgres", T1), c(11, "maria", "/decide F2 REST", T2)]
    assert labels_wanted(judge(both), "forks:open", "forks:resolved") == ("forks:resolved",)
    none = Issue(1, "t", "no forks", "open", "alice")
    assert labels_wanted(judge([], none), "forks:open", "forks:resolved") == ()


def test_the_largest_comment_fits_the_forge() -> None:
    """50 forks with long questions and resolutions, each decided many times: the body stays under 60,000
    characters and the data block never overflows (``sticky.fit`` shrinks the visible part)."""
    from bot.records import sticky

    body = "## Forks\n" + "".join(f"- [ ] F{n}: {'why ' * 80}\n" for n in range(1, 60))
    issue = Issue(1, "t", body, "open", "alice")
    reason = "because " * 60
    comments = [
        c(i, "maria", f"/decide F{i % 50 + 1} {reason}", f"2026-01-01T10:{i // 60:02d}:{i % 60:02d}Z")
        for i in range(1, 400)
    ]
    verdict = judge(comments, issue)
    assert len(verdict.forks) == 50
    text = sticky.fit("forks", "reconciliation", render_comment(verdict, Hints()), data_block(verdict, {}))
    assert len(text) <= 60_000


def test_times_with_an_offset_compare_as_instants() -> None:
    """Gitea may write its server's offset: 11:05+01:00 is 10:05Z, the record's own time."""
    made = "2026-01-01T10:05:00Z"
    same = c(10, "maria", "/decide F1 Postgres", made, updated="2026-01-01T11:05:00+01:00")
    assert judge([same]).forks[0].status == "resolved", "11:05+01:00 is 10:05Z: not edited"
    later = c(10, "maria", "/decide F1 Postgres", made, updated="2026-01-01T11:06:00+01:00")
    assert judge([later]).forks[0].status == "invalid"


def test_a_body_read_in_part_is_said_before_the_forks() -> None:
    """A fork listed past ``MAX_BODY_CHARS`` is not seen: the comment opens with the bug verdict's note."""
    from handlers.forks.parse import MAX_BODY_CHARS, parse_forks

    body = BODY + "x" * 79 + "\n" + ("y" * 99 + "\n") * (MAX_BODY_CHARS // 100) + "- [ ] F3: late\n"
    issue = Issue(1, "Storage", body, "open", "alice")
    forks = parse_forks(body, ("Open forks",))
    verdict = judge([], issue, forks=forks)
    assert [f.id for f in verdict.forks] == ["F1", "F2"]
    text = render_comment(verdict, Hints())
    read = forks.cut[0] if forks.cut else 0
    assert text.startswith(
        f"> [!NOTE]\n> This report is {len(body):,} characters long: I read only its first {read:,} "
    )
    assert "F3" not in text
    assert not render_comment(judge([]), Hints()).startswith("> [!NOTE]")

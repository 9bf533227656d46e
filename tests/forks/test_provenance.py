"""Decision provenance, issue 23 item 3: the record covers the fork's question, Steward remembers the forks an
issue listed, a source must be a person's, the quote is whole sentences, and records made before stay valid
as legacy records."""

from __future__ import annotations

from bot.forge import Comment, Issue
from handlers.forks.juror import Source, Verdict, fork_status, record_hash
from handlers.forks.render import Hints, data_block, recorded_from, remembered_from, render_comment

BODY = "## Open forks\n- [ ] F1: Postgres or SQLite?\n- [ ] F2: REST or gRPC?\n"
ISSUE = Issue(1, "Storage", BODY, "open", "alice")
PEOPLE = {"maria": "write", "bob": "admin", "eve": "read", "steward-bot": "write"}
URL = "https://forge.test/o/r/issues/2#issuecomment-500"
T0, T1, T2, T3 = (f"2026-01-01T10:{m:02d}:00Z" for m in (0, 5, 10, 20))


def c(cid: int, author: str, body: str, at: str = T1) -> Comment:
    return Comment(cid, author, body, at, at, f"https://forge.test/o/r/issues/1#issuecomment-{cid}", 1)


def judge(comments: list[Comment], issue: Issue = ISSUE, **kw: object) -> Verdict:
    return fork_status(issue, comments, PEOPLE, bot_login="steward-bot", **kw)  # type: ignore[arg-type]


def remember(verdict: Verdict, previous: dict | None = None) -> dict:  # type: ignore[type-arg]
    return data_block(verdict, recorded_from(previous), remembered_from(previous))


def again(comments: list[Comment], issue: Issue, block: dict, **kw: object) -> Verdict:  # type: ignore[type-arg]
    return judge(comments, issue, recorded=recorded_from(block), remembered=remembered_from(block), **kw)


def test_a_question_changed_after_the_decision_counts_open_until_decided_again() -> None:
    decision = c(10, "maria", "/decide F1 Postgres")
    block = remember(judge([decision]))
    new_body = BODY.replace("Postgres or SQLite?", "Postgres, SQLite or DuckDB?")
    changed = Issue(1, "Storage", new_body, "open", "alice")
    fork = again([decision], changed, block).forks[0]
    assert fork.status == "open"
    assert fork.reason == "question changed after the decision (it was “Postgres or SQLite?”)"
    assert again([decision], changed, block).unresolved == ("F1", "F2")
    text = render_comment(again([decision], changed, block), Hints())
    assert "question changed after the decision" in text
    # Decided again, on the new question: resolved.
    later = c(11, "bob", "/decide F1 DuckDB", T2)
    block = remember(again([decision], changed, block), block)
    assert again([decision, later], changed, block).forks[0].status == "resolved"


def test_the_record_hash_covers_the_question() -> None:
    a = record_hash("F1", "x", 1, "m", T0, "b", question="Postgres or SQLite?")
    b = record_hash("F1", "x", 1, "m", T0, "b", question="Postgres or DuckDB?")
    assert a != b and len(a) == 64


def test_a_fork_removed_without_a_decision_blocks_until_dropped() -> None:
    block = remember(judge([c(10, "maria", "/decide F1 Postgres")]))
    assert remembered_from(block) == {"F1": "Postgres or SQLite?", "F2": "REST or gRPC?"}
    without_f2 = Issue(1, "Storage", "## Open forks\n- [ ] F1: Postgres or SQLite?\n", "open", "alice")
    verdict = again([c(10, "maria", "/decide F1 Postgres")], without_f2, block)
    [f2] = [f for f in verdict.forks if f.id == "F2"]
    assert (f2.status, f2.removed) == ("open", True)
    assert f2.reason.startswith("removed without a decision")
    assert verdict.unresolved == ("F2",)
    assert "drop-fork F2 <reason>" in render_comment(verdict, Hints())
    # The memory survives the next write even though the description no longer lists F2.
    block = remember(verdict, block)
    assert "F2" in remembered_from(block)
    # An outsider cannot drop it; a decider can, with provenance.
    comments = [c(10, "maria", "/decide F1 Postgres"), c(11, "eve", "/drop-fork F2 obsolete", T2)]
    assert again(comments, without_f2, block).unresolved == ("F2",)
    comments.append(c(12, "bob", "/drop-fork F2 merged into F1", T3))
    verdict = again(comments, without_f2, block)
    assert verdict.all_resolved and [f.id for f in verdict.forks] == ["F1"]
    drop = [r for r in verdict.records if r.kind == "drop" and r.state == "drop"]
    assert [(r.recorder, r.text, r.recorded_at) for r in drop] == [("bob", "merged into F1", T3)]
    assert "**F2** dropped by @bob" in render_comment(verdict, Hints())


def test_a_fork_removed_after_its_decision_is_settled() -> None:
    comments = [c(10, "maria", "/decide F1 Postgres"), c(11, "maria", "/decide F2 REST", T2)]
    block = remember(judge(comments))
    only_f1 = Issue(1, "Storage", "## Open forks\n- [ ] F1: Postgres or SQLite?\n", "open", "alice")
    assert again(comments, only_f1, block).all_resolved


def test_a_source_written_by_steward_is_refused() -> None:
    mine = Comment(500, "steward-bot", "Postgres", T0, T0, URL, 2)
    recorder = c(10, "maria", f"/decide F1 Postgres --source {URL}")
    fork = judge([recorder], sources={URL: Source(URL, mine, 2, URL)}).forks[0]
    assert fork.status == "invalid"
    assert fork.reason.startswith("a decision must come from a person")


SAYS_NO = "We discussed it on the call. We should NOT use Postgres."


def _with_source(command: str, body: str = SAYS_NO, **kw: object) -> Verdict:
    source = Comment(500, "bob", body, T0, T0, URL, 2)
    return judge([c(10, "maria", command)], sources={URL: Source(URL, source, 2, URL)}, **kw)


def test_a_substring_of_the_source_no_longer_validates() -> None:
    fork = _with_source(f"/decide F1 Postgres --source {URL}").forks[0]
    assert fork.status == "invalid" and "--quote" in fork.reason
    fork = _with_source(f'/decide F1 Postgres --quote "use Postgres" --source {URL}').forks[0]
    assert fork.status == "invalid" and "not one or more whole sentences" in fork.reason
    fork = _with_source(f'/decide F1 SQLite --quote "We should NOT use Postgres." --source {URL}').forks[0]
    assert fork.status == "invalid" and "does not contain the resolution" in fork.reason


def test_a_whole_sentence_quote_validates_and_is_shown() -> None:
    verdict = _with_source(f"/decide F1 Postgres --quote “we should not use postgres” --source {URL}")
    fork = verdict.forks[0]
    assert fork.status == "resolved" and fork.record is not None
    assert fork.record.quote == "we should not use postgres"
    assert "“we should not use postgres”" in render_comment(verdict, Hints())


def test_records_made_before_stay_valid_as_legacy_records() -> None:
    """A first-version data block: the record was seen valid under the substring rule and its hash has the
    earlier form. Upgrading keeps it resolved, marks it, remembers the question from now on."""
    source = Comment(500, "bob", SAYS_NO, T0, T0, URL, 2)
    recorder = c(10, "maria", f"/decide F1 Postgres --source {URL}")
    old_hash = record_hash("F1", "Postgres", 500, "bob", T0, SAYS_NO)
    v1 = {
        "v": 1,
        "sources": [500],
        "records": [
            {"key": "10:decide:0", "fork": "F1", "hash": old_hash, "at": T1, "resolution": "Postgres",
             "decider": "bob", "url": URL},
        ],
    }  # fmt: skip
    sources = {URL: Source(URL, source, 2, URL)}
    verdict = again([recorder], ISSUE, v1, sources=sources)
    fork = verdict.forks[0]
    assert fork.status == "resolved" and fork.record is not None and fork.record.legacy
    assert "(legacy record)" in render_comment(verdict, Hints())
    # Upgrading remembers nothing removed (the first version did not list forks) …
    assert remembered_from(v1) == {}
    # … and the rewritten block keeps it legacy, with the question it has now.
    v2 = remember(verdict, v1)
    [kept] = recorded_from(v2).values()
    assert (kept.legacy, kept.question, kept.hash) == (True, "Postgres or SQLite?", old_hash)
    assert again([recorder], ISSUE, v2, sources=sources).forks[0].status == "resolved"
    # A legacy record whose source is then edited is caught all the same.
    edited = Comment(500, "bob", SAYS_NO + " Sorry, typo.", T0, T0, URL, 2)
    fork = again([recorder], ISSUE, v2, sources={URL: Source(URL, edited, 2, URL)}).forks[0]
    assert fork.status == "invalid" and "no longer hashes" in fork.reason


def test_the_memory_stays_bounded_with_long_questions_and_many_records() -> None:
    from bot.records import sticky

    long = "x" * 5000
    body = "## Open forks\n" + "".join(f"- [ ] F{i}: {long} {i}?\n" for i in range(1, 51))
    issue = Issue(1, "Storage", body, "open", "alice")
    comments = [c(100 + i, "maria", f"/decide F{i % 50 + 1} choice {i} " + "y" * 90) for i in range(120)]
    verdict = judge(comments, issue)
    block = data_block(verdict, {}, {f"F{i}": long for i in range(51, 200)})
    assert len(sticky.encode_data(block)) < 40_000
    assert len(block["records"]) <= 60 and len(block["forks"]) <= 60
    # A question changed beyond what a record covers is not noticed; within it, it is.
    again_issue = Issue(1, "Storage", body.replace(f"{long} 1?", f"{long} 1, really?"), "open", "alice")
    assert again(comments, again_issue, block).get("F1").status == "resolved"  # type: ignore[union-attr]
    shorter = Issue(1, "Storage", body.replace(f"- [ ] F1: {long} 1?", "- [ ] F1: y 1?"), "open", "alice")
    assert again(comments, shorter, block).get("F1").status == "open"  # type: ignore[union-attr]

"""Decision provenance end to end, on both forges: a fork decided in the thread; records from another
issue's comment and from a pull request's; refused records (no authority, text that does not match, a link
on another host); editing or deleting the deciding comment turns the fork invalid; superseding and
reopening keep history; the body-lags line; a replayed `/decide` recorded once; `/approve-spec` refused
while a fork is open; `steward forks` exit codes."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from typing import Any

import redis

from bot.demo.threads import ThreadedWorker
from bot.records import sticky
from tests.e2e.conftest import Steward
from tests.e2e.stack import steward_in_process

BODY = "What we store.\n\n## Open forks\n\n- [ ] F1: Postgres or SQLite?\n- [ ] F2: REST or gRPC?\n"
MARK = "<!-- steward:forks:reconciliation -->"


def forks_comment(steward: Steward, repo: str, number: int) -> dict[str, Any]:
    [found] = [c for c in steward.bot_comments(repo, number) if c["body"].startswith(MARK)]
    return found


def row(body: str, fork: str) -> str:
    [line] = [line for line in body.splitlines() if line.startswith(f"| **{fork}** |")]
    return line


def replies(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "steward:reply:" in c["body"]]


def link_of(steward: Steward, repo: str, number: int, comment_id: int) -> str:
    [found] = [c for c in steward.maintainer.comments(repo, number) if c["id"] == comment_id]
    return str(found["html_url"])


def labels(steward: Steward, repo: str, number: int) -> set[str]:
    return {name for name in steward.maintainer.labels_of(repo, number) if name.startswith("forks:")}


def test_a_fork_decided_in_the_thread_is_recorded_with_provenance(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    steward.settle()
    first = forks_comment(steward, repo, number)["body"]
    assert "**Next step: settle F1, F2**" in first
    assert "⬜ open" in row(first, "F1")
    assert labels(steward, repo, number) == {"forks:open"}

    decision = m.comment(repo, number, "/decide F1 Postgres\n\nJSONB and we already run it.")
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    where = link_of(steward, repo, number, decision)
    resolved = "| **F1** | Postgres or SQLite? | ✅ resolved | Postgres |  | @maintainer"
    assert f"{resolved} | [comment]({where}) |" in body
    lags = "**Body lags:** F1 is listed open in the description; resolved by @maintainer in [this comment]"
    assert f"{lags}({where})" in body
    assert "/decide F1 Postgres JSONB and we already run it." in body, "the deciding text is quoted"
    assert "+1" in m.reactions(repo, decision)
    assert labels(steward, repo, number) == {"forks:open"}, "F2 is still open"

    m.comment(repo, number, "/decide F2 REST")
    m.edit_issue(repo, number, body=BODY.replace("- [ ] F1", "- [x] F1").replace("- [ ] F2", "- [x] F2"))
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert body.startswith(MARK) and "**Nothing to do: all 2 design forks are resolved**" in body
    assert "Body lags" not in body, "the description caught up"
    assert labels(steward, repo, number) == {"forks:resolved"}
    assert len([c for c in steward.bot_comments(repo, number) if c["body"].startswith(MARK)]) == 1


def test_records_from_another_issues_comment_and_a_pull_requests(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    m.add_collaborator(repo, "outsider", "push")  # a colleague with write access records for the maintainer
    number = m.open_issue(repo, "Storage", body=BODY)
    meeting = m.open_issue(repo, "Design meeting notes")
    said = m.comment(repo, meeting, "After the call we go with **Postgres**, final.")
    pull = m.open_pull(repo, "Spike: API", "spike-api")
    said_on_pull = m.comment(repo, pull, "Let's use REST  over  HTTP; gRPC later.")
    steward.settle()
    from_issue = link_of(steward, repo, meeting, said)
    from_pull = link_of(steward, repo, pull, said_on_pull)
    assert ("/pull/" if steward.forge == "github" else "/pulls/") in from_pull
    steward.outsider.comment(repo, number, f"/decide F1 postgres --source {from_issue}")
    steward.outsider.comment(repo, number, f"/decide F2 rest over http --source {from_pull}")
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    by = "@maintainer (recorded by @outsider)"
    # A one-sentence source is its own quote, shown beside the resolution.
    quote = "“After the call we go with **Postgres**, final.”"
    assert f"✅ resolved | postgres | {quote} | {by} | [comment]({from_issue}) |" in body
    quote = "“Let's use REST over HTTP; gRPC later.”"
    assert f"✅ resolved | rest over http | {quote} | {by} | [comment]({from_pull}) |" in body
    assert labels(steward, repo, number) == {"forks:resolved"}
    data = sticky.unverified_data(forks_comment(steward, repo, number)["body"])
    assert isinstance(data, dict) and sorted(data["sources"]) == sorted([said, said_on_pull])


def test_refused_records_say_which_check_failed(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    elsewhere = m.open_issue(repo, "Notes")
    by_outsider = steward.outsider.comment(repo, elsewhere, "Postgres, obviously.")
    by_maintainer = m.comment(repo, elsewhere, "We pick SQLite for now.")
    steward.settle()

    steward.outsider.comment(repo, number, "/decide F1 Postgres")
    steward.settle()
    [refusal] = replies(steward, repo, number)
    assert "@outsider: `/steward decide` can only be run by people with write access or more" in refusal
    body = forks_comment(steward, repo, number)["body"]
    assert "⬜ open" in row(body, "F1"), "an outsider unsettles nothing"

    m.comment(repo, number, f"/decide F1 Postgres --source {link_of(steward, repo, elsewhere, by_outsider)}")
    steward.settle()
    assert any(
        "the record for F1 is refused: the deciding comment's author @outsider may not decide" in r
        for r in replies(steward, repo, number)
    )
    mismatch = link_of(steward, repo, elsewhere, by_maintainer)
    m.comment(repo, number, f"/decide F1 Postgres --source {mismatch}")
    steward.settle()
    answers = replies(steward, repo, number)
    assert any("does not contain the resolution (quote mismatch)" in r for r in answers)
    m.comment(
        repo, number, "/decide F1 Postgres --source https://elsewhere.example/o/r/issues/1#issuecomment-5"
    )
    steward.settle()
    assert any("the source is on another forge or repository" in r for r in replies(steward, repo, number))
    body = forks_comment(steward, repo, number)["body"]
    assert "❌ invalid — the source is on another forge or repository" in row(body, "F1")
    assert labels(steward, repo, number) == {"forks:open"}


def test_editing_or_deleting_the_deciding_comment_makes_the_fork_invalid(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    notes = m.open_issue(repo, "Notes")
    said = m.comment(repo, notes, "Decision: Postgres.")
    steward.settle()
    m.comment(repo, number, f"/decide F1 Postgres --source {link_of(steward, repo, notes, said)}")
    in_thread = m.comment(repo, number, "/decide F2 REST")
    steward.settle()
    assert labels(steward, repo, number) == {"forks:resolved"}

    m.edit_comment(repo, said, "Decision: SQLite after all.")
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert "❌ invalid — the deciding comment was edited after the record" in row(body, "F1")
    assert labels(steward, repo, number) == {"forks:open"}

    m.call("DELETE", f"/repos/{repo}/issues/comments/{in_thread}")
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert "❌ invalid — the deciding comment was deleted" in row(body, "F2")


def test_superseding_and_reopening_keep_the_history(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    m.comment(repo, number, "/decide F1 Postgres")
    m.comment(repo, number, "/decide F1 SQLite")
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert "✅ resolved | SQLite |" in row(body, "F1")
    assert "**F1** “Postgres” by @maintainer in [" in body and "— superseded — record `" in body

    m.comment(repo, number, "/reopen-fork F1 the load test changed the picture")
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert "⬜ open" in row(body, "F1")
    assert "reopened by @maintainer" in body and "the load test changed the picture" in body
    assert "“SQLite”" in body and "“Postgres”" in body, "both earlier records stay in the history"


def test_a_replayed_decide_is_recorded_once(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    m.comment(repo, number, "/decide F1 Postgres")
    steward.settle()
    before = [(c["id"], c["body"], c["updated_at"]) for c in steward.bot_comments(repo, number)]
    deliveries = m.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries?event=issue_comment")
    mine = [d for d in deliveries if d["action"] == "created"][-1]
    payload = m.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/{mine['id']}")["payload"]
    steward.clear_requests()
    for _ in range(3):
        steward.deliver("issue_comment", json.dumps(payload).encode(), delivery=str(uuid.uuid4()))
    steward.settle()
    after = [(c["id"], c["body"], c["updated_at"]) for c in steward.bot_comments(repo, number)]
    assert after == before
    writes = [r for r in steward.bot_requests(repo) if r["method"] in ("POST", "PATCH", "PUT", "DELETE")]
    assert [w for w in writes if "/reactions" not in w["path"]] == [], "a replay writes nothing new"


def test_approve_spec_is_refused_while_a_fork_is_open(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    m.comment(repo, number, "/decide F1 Postgres")
    m.comment(repo, number, "/approve-spec")
    steward.settle()
    assert any(
        "the spec cannot be approved while design forks are not resolved: F2. Record each decision with "
        "`/steward decide F2 <resolution>`" in r
        for r in replies(steward, repo, number)
    )


def _forks_cli(steward: Steward, *args: str) -> subprocess.CompletedProcess[str]:
    """`steward forks ARGS` against the sandbox, in the test's process (``steward_in_process``)."""
    env = {"STEWARD_REDIS_URL": steward.redis_url, "STEWARD_LOG_LEVEL": "warning"}
    if steward.forge == "github":
        env.update(STEWARD_GITHUB_API_URL=steward.settings.github_api_url, STEWARD_GITHUB_TOKEN="tok-bot")
    else:
        env.update(STEWARD_GITEA_URL=str(steward.settings.gitea_url), STEWARD_GITEA_TOKEN="tok-bot")
    return steward_in_process(["forks", *args], env)


def test_steward_forks_exit_codes(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    decision = m.comment(repo, number, "/decide F1 Postgres")
    steward.settle()
    pending = _forks_cli(steward, f"{repo}#{number}")
    assert pending.returncode == 1, pending.stderr
    assert f"{repo}#{number}: not resolved: F2 (of 2)." in pending.stdout
    m.comment(repo, number, "/decide F2 REST")
    steward.settle()
    done = _forks_cli(steward, f"{repo}#{number}", "--json")
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["all_resolved"] is True and verdict["unresolved"] == []
    first = verdict["forks"][0]
    assert (first["id"], first["status"], first["resolution"], first["decided_by"]) == (
        "F1",
        "resolved",
        "Postgres",
        "maintainer",
    )
    assert first["url"] == link_of(steward, repo, number, decision)
    assert len(first["record_hash"]) == 64
    assert _forks_cli(steward, "not-a-target").returncode == 2


def test_forks_listed_on_a_pull_request(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    pull = m.open_pull(repo, "Storage layer", "storage")
    m.edit_issue(repo, pull, body=BODY)  # a pull request is an issue to the issues API
    steward.settle()
    assert labels(steward, repo, pull) == {"forks:open"}
    m.comment(repo, pull, "/decide F1 Postgres")
    m.comment(repo, pull, "/decide F2 REST")
    steward.settle()
    body = forks_comment(steward, repo, pull)["body"]
    assert "**Nothing to do: all 2 design forks are resolved**" in body
    assert labels(steward, repo, pull) == {"forks:resolved"}


def test_steward_reconcile_records_what_was_missed(steward: Steward) -> None:
    from tests.e2e.stack import reconcile
    from tests.e2e.test_reconcile_e2e import _steward_down

    m = steward.maintainer
    repo = steward.new_repo()
    with _steward_down(steward):
        number = m.open_issue(repo, "Storage", body=BODY)
        m.comment(repo, number, "/decide F1 Postgres")
        steward.settle()
    assert not steward.bot_comments(repo, number), "Steward heard nothing"
    done = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert done.returncode == 0, done.stdout + done.stderr
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert "✅ resolved | Postgres |  | @maintainer" in row(body, "F1")
    assert labels(steward, repo, number) == {"forks:open"}


# --- issue 23 item 3: provenance that holds ---------------------------------------------------------------


def test_a_changed_question_a_removed_fork_and_drop_fork(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    m.comment(repo, number, "/decide F1 Postgres")
    steward.settle()
    assert "✅ resolved" in row(forks_comment(steward, repo, number)["body"], "F1")

    # The question changes after the decision: F1 counts as open again.
    m.edit_issue(repo, number, body=BODY.replace("Postgres or SQLite?", "Postgres, SQLite or DuckDB?"))
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert "⬜ open — question changed after the decision (it was “Postgres or SQLite?”)" in row(body, "F1")

    # F2 disappears from the description without a decision: it still blocks.
    only_f1 = "## Open forks\n\n- [ ] F1: Postgres, SQLite or DuckDB?\n"
    m.edit_issue(repo, number, body=only_f1)
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert "⬜ open — removed without a decision" in row(body, "F2")
    assert "drop-fork F2 <reason>" in body
    assert labels(steward, repo, number) == {"forks:open"}

    steward.outsider.comment(repo, number, "/drop-fork F2 nobody cares")
    m.comment(repo, number, "/drop-fork F1 not needed")
    steward.settle()
    answers = replies(steward, repo, number)
    assert any(
        "@outsider: `/steward drop-fork` can only be run by people with write access" in r for r in answers
    )
    assert any("F1 is still listed in the description, so it cannot be dropped" in r for r in answers)
    assert "removed without a decision" in row(forks_comment(steward, repo, number)["body"], "F2")

    m.comment(repo, number, "/drop-fork F2 merged into F1")
    m.comment(repo, number, "/decide F1 DuckDB")
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert not [line for line in body.splitlines() if line.startswith("| **F2** |")]
    assert "**F2** dropped by @maintainer" in body and "merged into F1" in body
    assert "✅ resolved | DuckDB |" in row(body, "F1")
    assert labels(steward, repo, number) == {"forks:resolved"}


def test_a_source_by_steward_and_a_quote_that_is_not_whole_sentences_are_refused(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    notes = m.open_issue(repo, "Notes")
    said = m.comment(repo, notes, "We discussed it on the call. We should NOT use Postgres.")
    steward.settle()
    mine = link_of(steward, repo, number, int(forks_comment(steward, repo, number)["id"]))
    m.comment(repo, number, f"/decide F1 Postgres --source {mine}")
    steward.settle()
    assert any("a decision must come from a person" in r for r in replies(steward, repo, number))

    source = link_of(steward, repo, notes, said)
    m.comment(repo, number, f"/decide F1 Postgres --source {source}")
    steward.settle()
    assert any(
        'name the one that decides with `--quote "the sentence"`' in r for r in replies(steward, repo, number)
    )
    m.comment(repo, number, f'/decide F1 Postgres --quote "use Postgres" --source {source}')
    steward.settle()
    assert any("not one or more whole sentences" in r for r in replies(steward, repo, number))
    assert "❌ invalid" in row(forks_comment(steward, repo, number)["body"], "F1")

    m.comment(
        repo,
        number,
        f'/decide F1 SQLite, not Postgres --quote "We should NOT use Postgres." --source {source}',
    )
    steward.settle()
    assert any("does not contain the resolution" in r for r in replies(steward, repo, number))
    m.comment(
        repo, number, f'/decide F1 NOT use Postgres --quote "We should NOT use Postgres." --source {source}'
    )
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert "✅ resolved | NOT use Postgres | “We should NOT use Postgres.” | @maintainer" in row(body, "F1")


def test_forks_labels_changed_by_hand_are_put_back(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    steward.settle()
    assert labels(steward, repo, number) == {"forks:open"}
    m.remove_label(repo, number, "forks:open")
    steward.settle()
    assert labels(steward, repo, number) == {"forks:open"}
    m.add_labels(repo, number, ["forks:resolved"])
    steward.settle()
    assert labels(steward, repo, number) == {"forks:open"}


# --- issue 25 §2: what one person's text costs -------------------------------------------------------------

PATHOLOGICAL = "x " + "![" * 30000 + "\n/decide F1 y](u)"


def test_an_outsiders_pathological_comments_are_parsed_once_each_and_cost_no_read(steward: Steward) -> None:
    from bot.commands.grammar import STATS

    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    m.comment(repo, number, "/decide F1 Postgres")
    steward.settle()
    STATS.reset()
    steward.clear_requests()
    for _ in range(12):
        steward.outsider.comment(repo, number, PATHOLOGICAL)
    steward.settle(timeout=120)
    # Before: every sync re-parsed every comment of the thread (78 parses by the juror and 12 by the
    # command dispatcher, each with a ~1 s search for spans). Now each comment is parsed once by the
    # dispatcher and once by the juror (then cached), and the span search that cost the time never runs.
    assert STATS.inline_parses == 0
    assert STATS.block_parses <= 2 * 12 + 1
    assert STATS.cache_hits >= sum(range(1, 12)), "later syncs of the thread hit the cache"
    # Not a command: no answer, no budget taken, and no read of the outsider's access.
    assert not replies(steward, repo, number)
    assert not [r for r in steward.bot_requests(repo) if "outsider" in r["path"]]
    assert "✅ resolved | Postgres |" in row(forks_comment(steward, repo, number)["body"], "F1")


def test_an_edit_of_an_uncited_comment_costs_no_read_once_the_index_is_complete(steward: Steward) -> None:
    from tests.e2e.stack import reconcile

    m = steward.maintainer
    repo = steward.new_repo()
    notes = m.open_issue(repo, "Notes")
    said = m.comment(repo, notes, "Postgres it is.")
    chatter = m.comment(repo, notes, "Unrelated remark.")
    cited_by = []
    for _ in range(3):
        cited_by.append(m.open_issue(repo, "Storage", body=BODY))
    steward.settle()
    m.comment(repo, cited_by[0], f"/decide F1 Postgres --source {link_of(steward, repo, notes, said)}")
    steward.settle()

    def scans() -> list[dict[str, Any]]:
        return [
            r
            for r in steward.bot_requests(repo)
            if r["method"] == "GET" and r["path"].endswith("/issues") and "labels=forks" in r["query"]
        ]

    # The index is not known complete yet (a new deployment, or Redis flushed): today's scan.
    steward.clear_requests()
    m.edit_comment(repo, chatter, "Unrelated remark, edited.")
    steward.settle()
    assert scans(), "falls back to scanning the issues that carry a forks label"

    done = reconcile(steward.settings, "--repo", f"{steward.forge}:{repo}")
    assert done.returncode == 0, done.stdout + done.stderr
    steward.settle()
    steward.clear_requests()
    m.edit_comment(repo, chatter, "Unrelated remark, edited twice.")
    steward.settle()
    assert scans() == []
    assert not [r for r in steward.bot_requests(repo) if f"/issues/{cited_by[0]}" in r["path"]]

    # An edit of the cited comment still reaches the issue that cites it, from the index.
    m.edit_comment(repo, said, "Postgres it is. Or not.")
    steward.settle()
    assert scans() == []
    body = forks_comment(steward, repo, cited_by[0])["body"]
    assert "❌ invalid — the deciding comment was edited after the record" in row(body, "F1")


def test_upgrading_keeps_records_made_before_as_legacy_records(steward: Steward) -> None:
    """A record the previous version saw valid (a first-version data block: the substring rule, the earlier
    hash) stays resolved after the upgrade, marked as legacy; under today's rules the same record is refused
    (its source has two sentences and no `--quote`)."""
    from handlers.forks.juror import record_hash

    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "Storage", body=BODY)
    notes = m.open_issue(repo, "Notes")
    said = m.comment(repo, notes, "We discussed it on the call. Postgres it is.")
    steward.settle()
    source = link_of(steward, repo, notes, said)
    decide = m.comment(repo, number, f"/decide F1 Postgres --source {source}")
    steward.settle()
    assert "❌ invalid" in row(forks_comment(steward, repo, number)["body"], "F1")

    [raw] = [c for c in m.comments(repo, notes) if c["id"] == said]
    first_version = {
        "v": 1,
        "sources": [said],
        "records": [
            {
                "key": f"{decide}:decide:0",
                "fork": "F1",
                "hash": record_hash("F1", "Postgres", said, "maintainer", raw["created_at"], raw["body"]),
                "at": raw["created_at"],
                "resolution": "Postgres",
                "decider": "maintainer",
                "url": source,
            }
        ],
    }
    # What the previous version left: an unsigned first-version block. Steward's memory of its signatures goes
    # with the upgrade (as in tests/e2e/test_integrity_e2e.py), and the new version starts signing after it.
    for each in steward.workers:
        each.stop()
    mine = forks_comment(steward, repo, number)
    old_line = next(line for line in mine["body"].splitlines() if line.startswith("<!-- steward:data "))
    steward.bot.edit_comment(
        repo, mine["id"], sticky.unsigned(mine["body"].replace(old_line, sticky.encode_data(first_version)))
    )
    store = redis.Redis.from_url(steward.redis_url)
    store.delete("steward:signing:seq")
    store.set("steward:signing:since", str(time.time()))
    store.close()
    steward.workers.append(
        ThreadedWorker(steward.settings, handler_settings=steward.workers[0].handler_settings).start()
    )
    m.comment(repo, number, "Any news on the storage?")
    steward.settle()
    body = forks_comment(steward, repo, number)["body"]
    assert "✅ resolved | Postgres | (legacy record) | @maintainer" in row(body, "F1")
    assert "<!-- steward:sig v1 " in body, "re-signed on first touch"
    data = sticky.unverified_data(body)
    assert isinstance(data, dict) and data["v"] == 2
    assert [(r["legacy"], r["question"]) for r in data["records"]] == [(True, "Postgres or SQLite?")]
    assert labels(steward, repo, number) == {"forks:open"}  # F2 is still open; F1 did not reopen

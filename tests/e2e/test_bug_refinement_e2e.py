"""RA9 bug refinement in the forge, end to end: the label, the verdict comment, the labels that mirror
it, the lock on approval, stories, redelivery and permissions — on both forges."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import Steward

DATA = Path(__file__).parent / "data"
REJECTED = (DATA / "bug-rejected.md").read_text()
APPROVED = (DATA / "bug-approved.md").read_text()
STORY = (DATA / "story-approved.md").read_text()


def verdict_comments(steward: Steward, repo: str, number: int) -> list[dict[str, object]]:
    return [c for c in steward.bot_comments(repo, number) if "steward:ra9-verdict:" in str(c["body"])]


def refinement_labels(steward: Steward, repo: str, number: int) -> list[str]:
    return [label for label in steward.maintainer.labels_of(repo, number) if label.startswith("refinement:")]


def test_a_new_bug_is_pending_then_refined_rejected_then_approved_and_locked(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "Login button does nothing on Safari", REJECTED)
    labelled = steward.maintainer.open_issue(repo, "Checkout is slow", "It takes a minute.", labels=["bug"])
    plain = steward.maintainer.open_issue(repo, "Add dark mode", "Please.")
    steward.settle()
    assert refinement_labels(steward, repo, number) == ["refinement:pending"], "RA9 sections make a bug"
    assert refinement_labels(steward, repo, labelled) == ["refinement:pending"], "so does the bug label"
    assert refinement_labels(steward, repo, plain) == []

    steward.maintainer.add_labels(repo, number, ["refine"])
    steward.settle()
    [comment] = verdict_comments(steward, repo, number)
    body = str(comment["body"])
    # The marker, the data block, its signature (docs/integrity.md), then what a reader sees first: the
    # reporter's next step, mentioning them (a new comment notifies them), then the verdict.
    assert body.splitlines()[3].startswith("@outsider: thank you for the report — ")
    assert body.splitlines()[5].startswith("## Waiting for @outsider: ")
    for code in (
        "VISION_EMPTY",
        "AC_MISSING_GHERKIN",
        "RECIPE_MISSING_STEPS",
        "ROOT_CAUSE_TOO_SHORT",
        "REGRESSION_SLOT_MISSING",
        "MISSING_SECTION_8",
    ):
        assert f"<sub>`{code}`</sub>" in body
    assert "## Refinement Verdict" in body and "status: rejected" in body
    assert refinement_labels(steward, repo, number) == ["refinement:needs-info"]
    assert steward.maintainer.call("GET", f"/repos/{repo}/issues/{number}")["body"] == REJECTED, (
        "never edited"
    )

    steward.outsider.edit_issue(repo, number, body=APPROVED)
    steward.settle()
    [approved] = verdict_comments(steward, repo, number)
    assert approved["id"] == comment["id"], "the verdict comment is edited in place"
    assert "## ✅ Refined" in str(approved["body"])
    assert "blockers: []" in str(approved["body"])
    assert refinement_labels(steward, repo, number) == ["refinement:approved"]

    steward.outsider.edit_issue(repo, number, body=REJECTED)
    steward.settle()
    [locked] = verdict_comments(steward, repo, number)
    assert "## ✅ Refined" in str(locked["body"])
    assert "The description changed after approval" in str(locked["body"])
    assert refinement_labels(steward, repo, number) == ["refinement:approved"]


def test_refining_again_with_the_same_outcome_writes_nothing(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "bug", REJECTED, labels=["bug", "refine"])
    steward.settle()
    assert len(verdict_comments(steward, repo, number)) == 1
    steward.maintainer.client.delete(f"{steward.sandbox.url}/_sandbox/requests")
    steward.maintainer.edit_issue(repo, number, title="bug (retitled)")
    for delivery in steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries"):
        steward.maintainer.call(
            "POST", f"{steward.sandbox.url}/_sandbox/deliveries/{delivery['id']}/redeliver"
        )
    steward.settle()
    log = steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/requests")
    writes = [r for r in log if r["login"] == "steward-bot" and r["method"] != "GET"]
    assert writes == [], "a re-run with the same outcome writes nothing"
    assert len(verdict_comments(steward, repo, number)) == 1


def test_stories_of_an_approved_bug_get_their_own_verdicts(steward: Steward) -> None:
    repo = steward.new_repo()
    good = steward.maintainer.open_issue(repo, "Story: keep promotions", STORY)
    bad = steward.maintainer.open_issue(repo, "Story: vague", "## 1. Vision\n\nMake it work.\n")
    body = APPROVED + f"\n\n## Stories\n\n- [ ] #{good}\n- [ ] #{bad}\n"
    bug = steward.maintainer.open_issue(repo, "Cart total ignores discount", body, labels=["bug", "refine"])
    steward.settle()
    assert refinement_labels(steward, repo, bug) == ["refinement:approved"]
    assert refinement_labels(steward, repo, good) == ["refinement:approved"]
    assert refinement_labels(steward, repo, bad) == ["refinement:needs-triage"]
    [story_comment] = [c for c in steward.bot_comments(repo, bad) if "steward:ra9-story:" in c["body"]]
    assert "STORY_AC_MISSING_GHERKIN" in story_comment["body"] and f"#{bug}" in story_comment["body"]
    # Issue 34 §3: the story waits for the maintainers (its label says so), and its heading says the same.
    assert "## Waiting for the maintainers: 3 things" in story_comment["body"]
    assert "❌" not in story_comment["body"] and "not ready" not in story_comment["body"]
    [verdict] = verdict_comments(steward, repo, bug)
    assert f"- #{bad}: waiting for the maintainers (see its comment)" in str(verdict["body"])


def test_refine_command_is_for_the_author_or_triage(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "bug", REJECTED, labels=["bug"])
    steward.outsider.comment(repo, number, "/refine")
    steward.settle()
    refusal = [c["body"] for c in steward.bot_comments(repo, number) if "steward:reply:" in c["body"]]
    assert len(refusal) == 1 and "can only be run by" in refusal[0]
    assert verdict_comments(steward, repo, number) == []
    steward.maintainer.comment(repo, number, "/refine")
    steward.settle()
    [verdict] = verdict_comments(steward, repo, number)
    assert "status: rejected" in str(verdict["body"])


def notices(steward: Steward, repo: str, number: int) -> list[str]:
    return [str(c["body"]) for c in steward.bot_comments(repo, number) if "steward:ra9-notice:" in c["body"]]


def test_an_outsiders_bug_cannot_make_steward_label_a_maintainers_issue_as_its_story(
    steward: Steward,
) -> None:
    """Security: the issues a `## Stories` list names are refined only when they are sub-issues of the
    bug or were opened by the bug's author; the verdict comment says which were skipped and why."""
    repo = steward.new_repo()
    theirs = steward.maintainer.open_issue(repo, "Roadmap", "The maintainer's own planning issue.")
    own = steward.outsider.open_issue(repo, "Story: vague", "## 1. Vision\n\nMake it work.\n")
    body = APPROVED + f"\n\n## Stories\n\n- [ ] #{theirs}\n- [ ] #{own}\n"
    bug = steward.outsider.open_issue(repo, "Cart total ignores discount", body)
    steward.maintainer.add_labels(repo, bug, ["refine"])
    steward.settle()
    assert refinement_labels(steward, repo, bug) == ["refinement:approved"]
    assert steward.bot_comments(repo, theirs) == [] and steward.maintainer.labels_of(repo, theirs) == []
    own_labels = refinement_labels(steward, repo, own)
    assert own_labels == ["refinement:needs-triage"], "the author's own story counts"
    [verdict] = verdict_comments(steward, repo, bug)
    assert (
        f"#{theirs} was not refined as a story: it is not a sub-issue and was opened by someone else"
        in str(verdict["body"])
    )


def test_refine_on_a_bug_adds_the_label_so_later_edits_are_checked_again(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "bug", REJECTED)
    steward.outsider.comment(repo, number, "/refine")
    steward.settle()
    assert "refine" in steward.maintainer.labels_of(repo, number)
    assert refinement_labels(steward, repo, number) == ["refinement:needs-info"]
    steward.outsider.edit_issue(repo, number, body=APPROVED)
    steward.settle()
    assert refinement_labels(steward, repo, number) == ["refinement:approved"], "the edit was re-checked"


def test_a_rejection_notifies_the_author_once_with_a_link_and_a_prefilled_template(steward: Steward) -> None:
    """A new rejected verdict mentions the author in its first line (a mention in a new comment notifies);
    an edit notifies nobody, so a later round that asks something else gets one short new comment mentioning
    the author and linking the verdict. A casual report gets the RA9 template, pre-filled with what it says,
    folded in the verdict."""
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "App crashes", "App crashes when I open it")
    steward.maintainer.add_labels(repo, number, ["bug", "refine"])
    steward.settle()
    [verdict] = verdict_comments(steward, repo, number)
    body = str(verdict["body"])
    assert "<details><summary>An RA9 document built from the report" in body
    assert "## 1. Vision\nApp crashes when I open it" in body
    assert "\n@outsider: thank you for the report — " in body and "for you below" in body
    assert notices(steward, repo, number) == [], "the new verdict asks itself: no separate notice"
    for delivery in steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries"):
        if delivery["repository"] == repo:
            steward.maintainer.call(
                "POST", f"{steward.sandbox.url}/_sandbox/deliveries/{delivery['id']}/redeliver"
            )
    steward.settle()
    assert notices(steward, repo, number) == [], "a replay writes nothing"
    steward.outsider.edit_issue(repo, number, body="## 1. Vision\n\nIt crashes.\n")
    steward.settle()
    [edited] = verdict_comments(steward, repo, number)
    # An edit cannot notify: the edited verdict carries no ask line (its heading names whom it waits for).
    assert edited["id"] == verdict["id"] and "thank you for the report —" not in str(edited["body"])
    [notice] = notices(steward, repo, number)
    assert "@outsider: thank you for the report — " in notice and str(verdict["html_url"]) in notice, (
        "a changed ask is a new notice"
    )


# A report in GitHub's default bug template (tests/fixtures/bug-reports/github-default-template.md), filled
# in the way reporters do: no `Actual behavior`, which the template does not ask for.
GITHUB_FORMAT = """**Describe the bug**
Saving a file with a non-ASCII name closes the editor.

**To Reproduce**
Steps to reproduce the behavior:
1. Create a file named `café.txt`
2. Open it and press Ctrl+S

**Expected behavior**
The file is saved.

**Screenshots**
https://example.com/crash.png

**Desktop (please complete the following information):**
 - OS: Ubuntu 24.04
 - Version 1.4.2

**Additional context**
Started with 1.4.0.
"""
# Issue 34: GitHub's default template has no "Actual behavior" field (its description says what happens),
# so the report above is complete; the same report with its Desktop field left as the template has it lacks
# the environment.
UNFILLED = GITHUB_FORMAT.replace(
    " - OS: Ubuntu 24.04\n - Version 1.4.2", " - OS: [e.g. iOS]\n - Version [e.g. 22]"
)
WITH_ACTUAL = GITHUB_FORMAT


def test_a_report_in_githubs_format_asks_its_reporter_only_for_what_the_reproduction_lacks(
    steward: Steward,
) -> None:
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "Editor closes on save", UNFILLED)
    steward.settle()
    assert refinement_labels(steward, repo, number) == ["refinement:pending"], "the format makes a bug"
    steward.maintainer.add_labels(repo, number, ["refine"])
    steward.settle()
    [verdict] = verdict_comments(steward, repo, number)
    body = str(verdict["body"])
    # Issue 34 §1-2: the template's placeholders are no answer; the reporter is asked one question in plain
    # words, by the name of the field they left empty; the maintainers' part is folded.
    assert "## Waiting for @outsider: 1 question" in body
    mine = body[body.index("## Waiting for") : body.index("<details>")]
    assert (
        "1. Which version were you on, and on which system (operating system, browser or runtime)? "
        "(the template's **Desktop** field)"
    ) in mine
    for word in ("MISSING_", "RECIPE_", "heading", "`#", "Actual behavior"):
        assert word not in mine, word
    theirs = body[body.index("<details><summary>For the maintainers: 8 things") :]
    for n in (2, 3, 4, 6, 7, 8, 9):
        assert f"`MISSING_SECTION_{n}`" in theirs
    assert "`STATUS_LINE_MISSING`" in theirs
    folded = body[body.index("An RA9 document built from the report") :]
    assert "### 5.2 Steps to Reproduce\n1. Create a file" in folded, "the template's own lines are left out"
    assert "status: rejected" in body
    assert refinement_labels(steward, repo, number) == ["refinement:needs-info"]
    assert "@outsider: thank you for the report — 1 question for you below" in body.split("## Waiting", 1)[0]
    assert notices(steward, repo, number) == []


def test_when_the_reporters_edit_completes_their_part_the_notice_says_so_once(steward: Steward) -> None:
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "Editor closes on save", UNFILLED)
    steward.maintainer.add_labels(repo, number, ["bug", "refine"])
    steward.settle()
    [asked] = verdict_comments(steward, repo, number)
    assert "@outsider: thank you for the report — 1 question for you" in str(asked["body"])
    assert notices(steward, repo, number) == [], "asked in the new verdict"

    steward.outsider.edit_issue(repo, number, body=WITH_ACTUAL)
    steward.settle()
    [verdict] = verdict_comments(steward, repo, number)
    assert "## Reporter's part complete — waiting for the maintainers" in str(verdict["body"])
    assert "nothing more is needed from the reporter" in str(verdict["body"])
    assert "question for you" not in str(verdict["body"]), "the verdict's ask is gone: resolved"
    [ready] = notices(steward, repo, number)
    assert "@outsider: thank you — the reproduction is complete; nothing more is needed from you." in ready

    steward.clear_requests()
    for delivery in steward.maintainer.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries"):
        if delivery["repository"] == repo:
            steward.maintainer.call(
                "POST", f"{steward.sandbox.url}/_sandbox/deliveries/{delivery['id']}/redeliver"
            )
    steward.settle()
    writes = [r for r in steward.bot_requests(repo) if r["method"] != "GET"]
    assert writes == [], "a replay writes nothing"
    assert len(notices(steward, repo, number)) == 1, "the reporter is told once"


def test_a_second_round_asking_something_else_gets_a_notice_then_one_thank_you(steward: Steward) -> None:
    """The first ask rides in the new verdict; an edit that changes what is asked of the reporter cannot
    notify them through the edited verdict, so it gets a separate notice; when they complete their part,
    that notice is resolved and they are thanked once."""
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "Editor closes on save", UNFILLED)
    steward.maintainer.add_labels(repo, number, ["bug", "refine"])
    steward.settle()
    assert notices(steward, repo, number) == []

    steward.outsider.edit_issue(repo, number, body="Editor closes when I save.")
    steward.settle()
    [verdict] = verdict_comments(steward, repo, number)
    assert "thank you for the report —" not in str(verdict["body"]), "no ask line in an edited verdict"
    [asked] = notices(steward, repo, number)
    assert "@outsider: thank you for the report — " in asked and str(verdict["html_url"]) in asked

    steward.outsider.edit_issue(repo, number, body=WITH_ACTUAL)
    steward.settle()
    resolved, ready = notices(steward, repo, number)
    assert "✅ Resolved: the changes asked for here are in." in resolved
    assert "@outsider: thank you — the reproduction is complete; nothing more is needed from you." in ready
    steward.outsider.edit_issue(repo, number, title="Editor closes on save (retitled)")
    steward.settle()
    assert len(notices(steward, repo, number)) == 2, "thanked once"

    steward.maintainer.edit_issue(repo, number, body=APPROVED)
    steward.settle()
    assert refinement_labels(steward, repo, number) == ["refinement:approved"]
    resolved, ready = notices(steward, repo, number)
    assert "@outsider: thank you — this bug report is complete and approved" in ready


def test_the_old_rejected_label_gives_way_to_a_state_a_passer_by_can_read(steward: Steward) -> None:
    """Issue 34 §3: a bug labelled by an earlier Steward `refinement:rejected` (red) is relabelled on the
    next event: `refinement:needs-info` while the reporter has questions, `refinement:needs-triage` once their
    part is complete — neither red, each described; the verdict heading says the same."""
    repo = steward.new_repo()
    m = steward.maintainer
    m.call("POST", f"/repos/{repo}/labels", {"name": "refinement:rejected", "color": "d73a4a"})
    number = steward.outsider.open_issue(repo, "Editor closes on save", UNFILLED)
    m.add_labels(repo, number, ["bug", "refinement:rejected"])
    steward.settle()
    m.add_labels(repo, number, ["refine"])
    steward.settle()
    assert refinement_labels(steward, repo, number) == ["refinement:needs-info"]
    labels = {label["name"]: label for label in m.call("GET", f"/repos/{repo}/labels")}
    info = labels["refinement:needs-info"]
    assert info["color"].lstrip("#").lower() != "d73a4a" and "waiting for the reporter" in info["description"]
    steward.outsider.edit_issue(repo, number, body=GITHUB_FORMAT)
    steward.settle()
    assert refinement_labels(steward, repo, number) == ["refinement:needs-triage"]
    [verdict] = verdict_comments(steward, repo, number)
    assert "## Reporter's part complete — waiting for the maintainers" in str(verdict["body"])


def test_an_answer_in_a_comment_completes_the_reporters_part(steward: Steward) -> None:
    """Issue 34 §1 and §5: the reporter answers the verdict's question in a comment (the commonest reply):
    the bug waits for the maintainers, with no new ask, and the verdict says where the answer was read. The
    answer stops counting when someone else edits that comment (writers can edit any comment). Before: the
    comment was ignored and the reporter was still asked."""
    repo = steward.new_repo()
    number = steward.outsider.open_issue(repo, "Editor closes on save", UNFILLED)
    steward.maintainer.add_labels(repo, number, ["bug", "refine"])
    steward.settle()
    assert refinement_labels(steward, repo, number) == ["refinement:needs-info"]
    answer = steward.outsider.comment(repo, number, "Version: 1.4.2, on Ubuntu 24.04 with Firefox 133.")
    steward.settle()
    [verdict] = verdict_comments(steward, repo, number)
    body = str(verdict["body"])
    assert "## Reporter's part complete — waiting for the maintainers" in body
    assert "Read from @outsider's [comment](" in body and "the version and system" in body
    assert refinement_labels(steward, repo, number) == ["refinement:needs-triage"]
    [ready] = notices(steward, repo, number)
    assert ready.startswith("<!--") and "nothing more is needed from you" in ready, "thanked, not asked"

    # Still an answer in its words, but no longer the reporter's: it does not count.
    steward.maintainer.edit_comment(repo, answer, "Version: 1.4.3, on Ubuntu 24.04 with Firefox 133.")
    steward.settle()
    labels = refinement_labels(steward, repo, number)
    assert labels == ["refinement:needs-info"], "an answer someone else edited is not the reporter's"


def test_someone_with_triage_access_may_answer_for_the_reporter_and_an_outsider_may_not(
    steward: Steward,
) -> None:
    """Issue 34 §1: what the reporter, or anyone with triage access or more, writes in a comment is read into
    the verdict; another outsider's comment is not (fails before: every comment was ignored)."""
    repo = steward.new_repo()
    number = steward.maintainer.open_issue(repo, "Editor closes on save", UNFILLED, labels=["bug", "refine"])
    steward.settle()
    assert refinement_labels(steward, repo, number) == ["refinement:needs-info"]
    steward.outsider.comment(repo, number, "Version: 1.4.2, on Ubuntu 24.04 with Firefox 133.")
    steward.settle()
    assert refinement_labels(steward, repo, number) == ["refinement:needs-info"], "not the reporter's answer"
    steward.triager.comment(repo, number, "Version: 1.4.2, on Ubuntu 24.04 with Firefox 133.")
    steward.settle()
    assert refinement_labels(steward, repo, number) == ["refinement:needs-triage"]
    [verdict] = verdict_comments(steward, repo, number)
    assert "Read from @triager's [comment](" in str(verdict["body"])


def test_work_on_a_story_waits_until_its_own_verdict_is_approved(steward: Steward) -> None:
    """Issue 36 §4, the story gate: a story listed by a bug is stamped `refinement:pending` as the bug is;
    `/hypothesis`, `/evidence` and `/bugfix` on it are refused with `STORY_NOT_REFINED` while its bug is not
    approved, and while its own verdict is not; once it is approved its record and label say so, and the
    investigation starts. Before issue 36 the story was neither stamped nor told why it was refused."""
    from tests.e2e.test_bugfix_e2e import run, sticky_of

    repo = steward.new_repo()
    m = steward.maintainer
    story = m.open_issue(repo, "Story: keep promotions", "## 1. Vision\n\nMake it work.\n")
    listed = f"\n\n## Stories\n\n- [ ] #{story}\n"
    bug = m.open_issue(repo, "Cart total ignores discount", REJECTED + listed, labels=["bug", "refine"])
    steward.settle()
    assert refinement_labels(steward, repo, bug) == ["refinement:needs-info"]
    assert refinement_labels(steward, repo, story) == ["refinement:pending"], "stamped as the bug is"
    stamp = sticky_of(steward, repo, story, "ra9-story")
    assert stamp is not None and f"this issue is a story of #{bug}" in stamp["body"]
    assert "status: pending" in stamp["body"]
    for command in (
        "/hypothesis Rounding: the total is rounded twice",
        "/evidence H1 for src/cart/total.py:1 the total",
        "/bugfix",
    ):
        reply = run(steward, repo, story, command)
        assert "`STORY_NOT_REFINED`" in reply and f"a story of #{bug}" in reply, reply
        assert f"#{bug} is not yet" in reply and "BUG_NOT_REFINED" not in reply, reply

    m.edit_issue(repo, bug, body=APPROVED + listed)
    steward.settle()
    assert refinement_labels(steward, repo, bug) == ["refinement:approved"]
    assert refinement_labels(steward, repo, story) == ["refinement:needs-triage"]
    reply = run(steward, repo, story, "/hypothesis Rounding: the total is rounded twice")
    assert "`STORY_NOT_REFINED`" in reply and "its own refinement verdict is not approved" in reply, reply
    assert sticky_of(steward, repo, story, "debug-board") is None

    m.edit_issue(repo, story, body=STORY)  # an edited story is checked again with its (approved) bug
    steward.settle()
    assert refinement_labels(steward, repo, story) == ["refinement:approved"]
    approved = sticky_of(steward, repo, story, "ra9-story")
    assert approved is not None and approved["id"] == stamp["id"], "the stamp is the story's verdict comment"
    assert "status: approved" in approved["body"] and "**Status:** Refined" in approved["body"]
    m.comment(repo, story, "/hypothesis Rounding: the total is rounded twice")
    steward.settle()
    assert sticky_of(steward, repo, story, "debug-board") is not None, "the investigation starts"

    # A bug nobody asked to refine yet stamps the stories it lists as it is stamped itself.
    later = m.open_issue(repo, "Story: the receipt", "## 1. Vision\n\nShow the discount.\n")
    other = m.open_issue(
        repo, "Receipt drops the discount", REJECTED + f"\n\n## Stories\n\n- [ ] #{later}\n", labels=["bug"]
    )
    steward.settle()
    assert refinement_labels(steward, repo, other) == ["refinement:pending"]
    assert refinement_labels(steward, repo, later) == ["refinement:pending"]


def _bug_with_two_stories(steward: Steward) -> tuple[str, int, int, int]:
    """A new repository with a bug (not yet approved) whose `## Stories` lists two issues its author opened:
    (repository, bug, first story, second story)."""
    repo = steward.new_repo()
    m = steward.maintainer
    story = m.open_issue(repo, "Story: keep promotions", "## 1. Vision\n\nMake it work.\n")
    kept = m.open_issue(repo, "Story: keep coupons", "## 1. Vision\n\nKeep them.\n")
    both = f"\n\n## Stories\n\n- [ ] #{story}\n- [ ] #{kept}\n"
    bug = m.open_issue(repo, "Cart total ignores discount", REJECTED + both, labels=["bug", "refine"])
    return repo, bug, story, kept


def test_a_story_taken_off_the_bugs_list_is_released(steward: Steward) -> None:
    """A story the bug's author takes off its `## Stories` list no longer waits with the bug: its pending
    label goes and its story comment says it was released (both forges; on GitHub a sub-issue stays a story
    whatever the list says). Another story still listed keeps its stamp, and saving the same text again
    writes nothing. Before, the story kept `refinement:pending` and was refused as a story's."""
    from tests.e2e.test_bugfix_e2e import run, sticky_of

    repo, bug, story, kept = _bug_with_two_stories(steward)
    m = steward.maintainer
    steward.settle()
    assert refinement_labels(steward, repo, story) == refinement_labels(steward, repo, kept)
    assert refinement_labels(steward, repo, story) == ["refinement:pending"]
    stamp = sticky_of(steward, repo, story, "ra9-story")
    assert stamp is not None

    m.edit_issue(repo, bug, body=REJECTED + f"\n\n## Stories\n\n- [ ] #{kept}\n")
    steward.settle()
    assert refinement_labels(steward, repo, story) == [], "released"
    assert sticky_of(steward, repo, story, "ra9-story") is None
    note = sticky_of(steward, repo, story, "ra9-story-released")
    assert note is not None and note["id"] == stamp["id"]
    assert f"no longer a story of #{bug} (#{bug} no longer lists it)" in note["body"]
    assert refinement_labels(steward, repo, kept) == ["refinement:pending"], "still listed: still waiting"
    reply = run(steward, repo, story, "/bugfix")
    assert "`STORY_NOT_REFINED`" not in reply, reply

    steward.clear_requests()
    m.edit_issue(repo, bug, body=REJECTED + f"\n\n## Stories\n\n- [ ] #{kept}\n")  # the same text again
    steward.settle()
    assert [r for r in steward.bot_requests(repo) if r["method"] not in ("GET", "HEAD")] == []


def test_a_story_taken_off_the_list_while_steward_was_down_is_released_by_the_catch_up(
    steward: Steward,
) -> None:
    """The edit's webhook says what the list was; once it is lost (Steward down), the catch-up reads each
    story still stamped pending and releases one its bug no longer has (both forges)."""
    from tests.e2e.test_bugfix_e2e import sticky_of
    from tests.e2e.test_story_sub_issues_e2e import catch_up, while_steward_is_down

    repo, bug, story, kept = _bug_with_two_stories(steward)
    m = steward.maintainer
    steward.settle(then_next_second=True)
    assert refinement_labels(steward, repo, story) == ["refinement:pending"]

    unlist = f"\n\n## Stories\n\n- [ ] #{kept}\n"
    while_steward_is_down(steward, repo, lambda: m.edit_issue(repo, bug, body=REJECTED + unlist))
    assert refinement_labels(steward, repo, story) == ["refinement:pending"], "Steward heard nothing"
    catch_up(steward, repo)
    assert refinement_labels(steward, repo, story) == [], "released"
    note = sticky_of(steward, repo, story, "ra9-story-released")
    assert note is not None and f"(#{bug} no longer has it as a story)" in note["body"]
    assert refinement_labels(steward, repo, kept) == ["refinement:pending"]


def test_an_outsider_cannot_release_a_story_of_a_maintainers_bug(steward: Steward) -> None:
    """Security: an edit releases only a story Steward recorded for the edited bug. An outsider's bug that
    lists a story of a maintainer's bug, then drops it, leaves that story waiting with its own bug (its
    label, its story comment); Steward writes nothing on it."""
    repo, bug, story, kept = _bug_with_two_stories(steward)
    steward.settle()
    assert refinement_labels(steward, repo, story) == ["refinement:pending"]
    stamp = steward.bot_comments(repo, story)
    listing = REJECTED + f"\n\n## Stories\n\n- [ ] #{story}\n- [ ] #{kept}\n"
    theirs = steward.outsider.open_issue(repo, "Cart total ignores discount too", listing)
    steward.outsider.comment(repo, theirs, "/refine")
    steward.settle()
    steward.outsider.edit_issue(repo, theirs, body=REJECTED)
    steward.settle()
    assert refinement_labels(steward, repo, story) == refinement_labels(steward, repo, kept)
    assert refinement_labels(steward, repo, story) == ["refinement:pending"], f"still a story of #{bug}"
    assert steward.bot_comments(repo, story) == stamp, "its story comment is untouched"

"""`steward verify` on a stripped record (issue 35 item 11), on both forges.

Before: a writer who removed the data block (and its signature line) from Steward's record left a comment
`steward verify` did not count as a record at all, and it exited 0 — "0 record(s), all verify." Now a
comment of a kind Steward always writes with a block is `tampered` without one, no record at all is not a
pass, and each row says which key signed it (the issue's "Also": which key signed what)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Steward
from tests.e2e.test_integrity_e2e import FORKS, public_key, verify, writer


def test_a_record_stripped_of_its_block_fails_verification(steward: Steward, tmp_path: Path) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    writer(steward, repo)
    number = m.open_issue(repo, "Storage", body=FORKS)
    steward.settle()
    key_file = public_key(steward, tmp_path)
    fingerprint = (tmp_path / "fingerprint").read_text()
    done = verify(steward, f"{repo}#{number}", key_file)
    assert done.returncode == 0, done.stdout + done.stderr
    [row] = json.loads(done.stdout)["records"]
    assert row["key"] == fingerprint, "each record says which key signed it"
    for each in steward.workers:
        each.stop()  # Steward is down: nothing rebuilds the record meanwhile
    [record] = [c for c in steward.bot_comments(repo, number) if "steward:forks:reconciliation" in c["body"]]
    kept = [
        ln
        for ln in record["body"].splitlines()
        if not ln.startswith(("<!-- steward:data ", "<!-- steward:sig "))
    ]
    steward.outsider.edit_comment(repo, record["id"], "\n".join(kept))
    done = verify(steward, f"{repo}#{number}", key_file)
    assert done.returncode == 1, done.stdout + done.stderr
    [row] = json.loads(done.stdout)["records"]
    assert row["outcome"] == "tampered" and row["record"] == "forks:reconciliation" and row["key"] is None
    # An issue where Steward keeps no record: nothing verifies, and that is not a pass.
    plain = m.open_issue(repo, "Nothing here")
    done = verify(steward, f"{repo}#{plain}", key_file)
    assert done.returncode == 1 and json.loads(done.stdout) == {
        "issue": f"{repo}#{plain}",
        "all_verified": False,
        "records": [],
    }

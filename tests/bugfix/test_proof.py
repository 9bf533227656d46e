"""Whether the proof still stands at the head (issue 24 §3): the red commit holds the vouched code; the
regression test is not skipped (a table per language) and has lost no assertion line; what CI said of it."""

from __future__ import annotations

import pytest

from bot.forge import CIReport
from bot.forge.records import Annotation
from handlers.bugfix.proof import check_proof, head_report, red_names_test

PY = "tests/test_cart.py"
PY_TEST = "def test_total():\n    assert total([-1]) == 0\n    assert total([]) == 0\n"


def test_an_unchanged_test_stands() -> None:
    assert (
        check_proof(
            path=PY,
            vouched=PY_TEST,
            red_text=PY_TEST,
            head_text=PY_TEST + "\n\ndef test_more():\n    assert 1\n",
        )
        is None
    )


def test_a_first_commit_whose_test_is_not_the_vouched_code_fails() -> None:
    other = PY_TEST.replace("== 0", "== 1")
    problem = check_proof(path=PY, vouched=PY_TEST, red_text=other, head_text=other)
    assert problem is not None and problem.code == "RED_NOT_VOUCHED_CODE"
    # Appended to a file that existed is fine: the code is there, character for character.
    assert (
        check_proof(path=PY, vouched=PY_TEST, red_text="import x\n\n\n" + PY_TEST, head_text=PY_TEST) is None
    )


def test_the_probe_skip_and_assert_true_fails() -> None:
    """The review's probe: `@pytest.mark.skip` and a body of `assert True` at the head."""
    weakened = "import pytest\n\n@pytest.mark.skip\ndef test_total():\n    assert True\n"
    problem = check_proof(path=PY, vouched=PY_TEST, red_text=PY_TEST, head_text=weakened)
    assert problem is not None and problem.code == "REGRESSION_TEST_SKIPPED"
    only_weaker = "def test_total():\n    assert True\n"
    problem = check_proof(path=PY, vouched=PY_TEST, red_text=PY_TEST, head_text=only_weaker)
    assert problem is not None and problem.code == "REGRESSION_TEST_WEAKENED"
    assert "assert total([-1]) == 0" in problem.detail


SKIPPED = [
    (
        "tests/test_a.py",
        "def test_a():\n    assert f() == 1\n",
        "@pytest.mark.xfail(reason='x')\ndef test_a():\n    assert f() == 1\n",
    ),
    (
        "tests/test_a.py",
        "def test_a():\n    assert f() == 1\n",
        "def test_a():\n    pytest.skip('later')\n    assert f() == 1\n",
    ),
    (
        "tests/test_a.py",
        "def test_a():\n    assert f() == 1\n",
        "pytestmark = pytest.mark.skip\n\ndef test_a():\n    assert f() == 1\n",
    ),
    (
        "tests/test_a.py",
        "class TestA:\n    def test_a(self):\n        self.assertEqual(f(), 1)\n",
        "class TestA:\n    @unittest.skip('x')\n    def test_a(self):\n        self.assertEqual(f(), 1)\n",
    ),
    (
        "a.test.js",
        "test('adds', () => {\n  expect(f()).toBe(1);\n});\n",
        "test.skip('adds', () => {\n  expect(f()).toBe(1);\n});\n",
    ),
    (
        "a.test.js",
        "it('adds', () => {\n  expect(f()).toBe(1);\n});\n",
        "xit('adds', () => {\n  expect(f()).toBe(1);\n});\n",
    ),
    (
        "a_test.go",
        'func TestAdd(t *testing.T) {\n\tif f() != 1 {\n\t\tt.Fatal("no")\n\t}\n}\n',
        'func TestAdd(t *testing.T) {\n\tt.Skip("later")\n\tif f() != 1 {\n\t\tt.Fatal("no")\n\t}\n}\n',
    ),
    (
        "tests/a.rs",
        "#[test]\nfn adds() {\n    assert_eq!(f(), 1);\n}\n",
        "#[test]\n#[ignore]\nfn adds() {\n    assert_eq!(f(), 1);\n}\n",
    ),
    (
        "src/test/java/ATest.java",
        "@Test\nvoid adds() {\n    assertEquals(1, f());\n}\n",
        "@Disabled\n@Test\nvoid adds() {\n    assertEquals(1, f());\n}\n",
    ),
]


@pytest.mark.parametrize(("path", "red", "head"), SKIPPED)
def test_a_skip_or_expected_failure_marker_fails_in_each_language(path: str, red: str, head: str) -> None:
    problem = check_proof(path=path, vouched=red, red_text=red, head_text=head)
    assert problem is not None and problem.code == "REGRESSION_TEST_SKIPPED", (path, head)
    assert check_proof(path=path, vouched=red, red_text=red, head_text=red) is None


def test_a_lost_assertion_fails_in_go_and_rust() -> None:
    go = 'func TestAdd(t *testing.T) {\n\tif f() != 1 {\n\t\tt.Fatal("no")\n\t}\n}\n'
    weak = "func TestAdd(t *testing.T) {\n\t_ = f()\n}\n"
    problem = check_proof(path="a_test.go", vouched=go, red_text=go, head_text=weak)
    assert problem is not None and problem.code == "REGRESSION_TEST_WEAKENED"
    rust = "#[test]\nfn adds() {\n    assert_eq!(f(), 1);\n}\n"
    problem = check_proof(path="tests/a.rs", vouched=rust, red_text=rust, head_text="#[test]\nfn adds() {}\n")
    assert problem is not None and problem.code == "REGRESSION_TEST_WEAKENED"


def _report(text: str, *, annotation: str = "") -> CIReport:
    notes = (Annotation("tests/test_cart.py", 3, 3, "failure", annotation),) if annotation else ()
    return CIReport("ci/test", "check_run", "success", summary=text, annotations=notes)


def test_what_ci_at_the_head_said_of_the_regression_test() -> None:
    assert head_report([_report("12 passed")], ["test_total"]).verdict == "silent"
    assert head_report([_report("tests/test_cart.py::test_total PASSED")], ["test_total"]).verdict == "passed"
    skipped = head_report([_report("", annotation="test_total SKIPPED (conftest)")], ["test_total"])
    assert (skipped.verdict, skipped.where) == ("skipped", "ci/test")
    assert head_report([_report("test_total deselected by -k")], ["test_total"]).verdict == "skipped"


def test_red_proof_needs_a_failing_report_that_names_the_regression_test() -> None:
    lint = CIReport("lint", "check_run", "failure", summary="ruff: E501 line too long")
    assert not red_names_test([lint], ["test_total"])
    named = CIReport("ci/test", "check_run", "failure", summary="FAILED tests/test_cart.py::test_total")
    assert red_names_test([lint, named], ["test_total"])
    note = Annotation("tests/test_cart.py", 3, 3, "failure", "AssertionError: assert 1 == 0")
    on_file = CIReport("ci/test", "check_run", "failure", annotations=(note,))
    # An annotation on the test file counts only when the file holds the regression test alone.
    assert red_names_test([on_file], ["test_total"], "tests/test_cart.py")
    assert not red_names_test([on_file], ["test_total"], "")

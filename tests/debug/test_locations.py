"""The `path:line` recogniser: what counts as a place in code, and what never does."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from handlers.debug.locations import Location, find_locations, parse_path_line, parse_permalink

SEGMENT = st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=1, max_size=8)
EXT = st.sampled_from(["py", "ts", "go", "rs", "yml", "test.ts", "min.js", "c"])


def test_plain_paths_with_dots_and_lines() -> None:
    assert find_locations("see src/auth/login.py:42 now") == (Location("src/auth/login.py", 42),)
    assert [str(x) for x in find_locations("`pkg/a.b/c.test.ts:7:12`, ./Makefile.in:3.")] == [
        "pkg/a.b/c.test.ts:7",
        "Makefile.in:3",
    ]
    assert [str(x) for x in find_locations(".github/workflows/ci.yml:12 and login.py:10-20")] == [
        ".github/workflows/ci.yml:12",
        "login.py:10-20",
    ]


def test_things_that_are_not_locations() -> None:
    for text in ("at 10:42 today", "localhost:8080", "http://host:8080/x", "a.py:0", "../../etc/passwd:1",
                 "ratio 3:2", "src/a.py", "src/a.py:", "a.py:20-10"):  # fmt: skip
        assert find_locations(text) == (), text


def test_windows_paths_are_refused_whole() -> None:
    for text in (r"C:\src\auth\login.py:42", r"src\auth\login.py:42", "C:/src/login.py:42", r"d:\x.py:1"):
        assert find_locations(text) == (), text


def test_forge_permalinks() -> None:
    github = "https://github.com/o/r/blob/4f2a9c1/src/auth/login.py#L42"
    assert find_locations(f"look: {github}.") == (Location("src/auth/login.py", 42, None, github),)
    ranged = "https://github.com/o/r/blob/main/src/a.py#L42-L50"
    assert str(find_locations(ranged)[0]) == "src/a.py:42-50"
    gitea = "https://git.example.org/o/r/src/commit/4f2a9c1/lib/x.go#L7-L9"
    assert str(find_locations(f"[x]({gitea})")[0]) == "lib/x.go:7-9"
    assert str(find_locations("https://g.io/o/r/blob/v1/a.py#L3C2-L4C9")[0]) == "a.py:3-4"
    assert find_locations("https://github.com/o/r/blob/main/src/a.py") == ()
    assert find_locations("https://github.com/o/r/issues/4#L42") == ()


@given(st.lists(SEGMENT, min_size=0, max_size=4), SEGMENT, EXT, st.integers(1, 9_999_999))
def test_any_posix_path_with_an_extension_is_found_exactly(
    dirs: list[str], name: str, ext: str, line: int
) -> None:
    path = "/".join([*dirs, f"{name}.{ext}"])
    assert parse_path_line(f"{path}:{line}") == Location(path, line)
    assert find_locations(f"evidence: `{path}:{line}`, see above") == (Location(path, line),)


@given(st.lists(SEGMENT, min_size=2, max_size=4), EXT, st.integers(1, 99999))
def test_backslashes_never_make_a_location(parts: list[str], ext: str, line: int) -> None:
    path = "\\".join(parts) + f".{ext}"
    assert find_locations(f"{path}:{line}") == ()
    assert find_locations(f"C:\\{path}:{line}") == ()


@given(st.lists(SEGMENT, min_size=1, max_size=3), st.integers(1, 5000), st.integers(0, 50))
def test_permalinks_round_trip(parts: list[str], line: int, span: int) -> None:
    path = "/".join(parts) + ".py"
    tail = f"#L{line}" + (f"-L{line + span}" if span else "")
    for url in (f"https://h/o/r/blob/abc/{path}{tail}", f"https://h/o/r/src/branch/main/{path}{tail}"):
        found = parse_permalink(url)
        assert found == Location(path, line, line + span if span else None, url)


@given(st.text(max_size=300))
def test_never_raises(text: str) -> None:
    for location in find_locations(text):
        assert location.line >= 1 and "\\" not in location.path

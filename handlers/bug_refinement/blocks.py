"""The block scanner behind `document.parse_document`: where a markdown document's headings are, whether they
sit at the top level, and which lines are code or raw HTML.

It follows CommonMark's block structure (the same one markdown-it-py builds: block quotes, list items, fenced
and indented code, HTML blocks, ATX and setext headings, paragraphs with lazy continuation) but keeps only
what the refinement rules need. It exists because markdown-it-py, being pure Python, needs well over a second
for a 1 MiB document while the rules must answer in under 100 ms; the tests check it against markdown-it-py's
own tokens on generated documents. Pure: lines in, values out.
"""

from __future__ import annotations

import operator
import re
from typing import NamedTuple

from markdown_it.common.html_blocks import block_names
from markdown_it.common.html_re import HTML_OPEN_CLOSE_TAG_STR

__all__ = ["CodeBlock", "Heading", "normalise", "scan"]


class Heading(NamedTuple):
    level: int
    text: str  # the heading's inline source, trimmed, closing `#`s removed
    line: int  # first line (0-based, in the whole document)
    end_line: int  # line after the heading (a setext heading spans its paragraph and underline)
    top_level: bool  # not inside a block quote or list item


class CodeBlock(NamedTuple):
    start: int
    end: int  # exclusive; for a fence, includes the closing fence line
    info: str  # a fence's info string ("" for indented code and raw HTML)
    kind: str  # "fence" | "indented" | "html"
    top_level: bool


_ATX = re.compile(r"(#{1,6})(?:[ \t]+|$)")
_SETEXT = re.compile(r"(?:=+|-+)[ \t]*$")
_HR = re.compile(r"([-*_])(?:[ \t]*+\1){2,}+[ \t]*+$")
_FENCE = re.compile(r"(`{3,}+)([^`]*+)$|(~{3,}+)(.*)$")
# A link reference definition `[label]: destination "title"`. The label holds at most 999 characters
# (CommonMark) and at least one that is not blank; every repetition is possessive, so a line of 65,536 `[`
# costs one pass, not one per split point (issue 35: two overlapping stars made it quadratic).
_REFERENCE = re.compile(
    r"""\[(?=(?:\\.|\s)*+[^\s\]\\])(?:[^\]\\]|\\.){1,999}+\]:[ \t]*+(?:<[^>\n]*+>|[^\s<]\S*+)"""
    r"""(?:[ \t]++(?:"[^"]*+"|'[^']*+'|\([^)]*+\)))?[ \t]*+$"""
)
_LIST = re.compile(r"([-+*]|(\d{1,9})[.)])([ \t]+|$)")
_HTML_KINDS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None, bool], ...] = (
    # (start, end on the same or a later line — None: ends at a blank line, may interrupt a paragraph)
    (
        re.compile(r"<(?:script|pre|style|textarea)(?=\s|>|$)", re.I),
        re.compile(r"</(?:script|pre|style|textarea)>", re.I),
        True,
    ),
    (re.compile(r"<!--"), re.compile(r"-->"), True),
    (re.compile(r"<\?"), re.compile(r"\?>"), True),
    (re.compile(r"<![A-Za-z]"), re.compile(r">"), True),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>"), True),
    (re.compile(r"</?(?:" + "|".join(block_names) + r")(?=\s|/?>|$)", re.I), None, True),
    (re.compile(HTML_OPEN_CLOSE_TAG_STR + r"\s*$"), None, False),
)

_QUOTE = -1  # a block quote on the container stack; list items are their content indent (>= 1)

_NONE, _PARA, _FENCED, _INDENTED, _HTML = range(5)


def _indent(s: str) -> int:
    return len(s) - len(s.lstrip(" "))


def _match_containers(stack: list[int], fresh: list[bool], line: str) -> tuple[int, str]:
    # `fresh[k]`: item k began with an empty line and has had no content yet, so a blank line ends it.
    rest = line
    for k, c in enumerate(stack):
        if c == _QUOTE:
            ind = _indent(rest)
            if ind <= 3 and rest[ind : ind + 1] == ">":
                rest = rest[ind + 1 :]
                if rest[:1] == " ":
                    rest = rest[1:]
            else:
                return k, rest
        elif not rest.strip():
            if fresh[k]:
                return k, rest
            rest = ""
        elif _indent(rest) >= c:
            rest = rest[c:]
        else:
            return k, rest
    return len(stack), rest


def _interrupts_paragraph(rest: str, outdent: int, list_indent: int) -> bool:
    """Whether `rest`, a line that did not match every open container, ends the open paragraph.

    If it does not, it is a lazy continuation line. As in markdown-it, indentation counts from the content
    column of the innermost open list item (`outdent` columns to the right), and a list marker ends the
    paragraph here, even `7.` or an empty item, unless it sits 4 columns right of the list's own indent
    (`list_indent`, negative when the innermost container is a block quote).
    """
    if not rest.strip():
        return True
    ind = _indent(rest)
    if ind - outdent >= 4:
        return False
    t = rest[ind:]
    c0 = t[0]
    if c0 == ">" or (c0 == "#" and _ATX.match(t)):
        return True
    if c0 in "`~" and _FENCE.match(t):
        return True
    if c0 in "-*_" and _HR.match(t):
        return True
    if (c0 in "-+*" or c0.isdigit()) and _LIST.match(t):
        return not (list_indent >= 0 and ind - list_indent >= 4 and ind < outdent)
    if c0 == "<":
        return any(interrupts and start.match(t) for start, _end, interrupts in _HTML_KINDS)
    return False


def _atx_text(t: str, after_marker: int) -> str:
    content = t[after_marker:].rstrip(" \t")
    if content[-1:] != "#":
        return content.lstrip(" \t")
    without = content.rstrip("#")
    if not without:
        return ""
    if without != content and without[-1] in " \t":
        content = without
    return content.strip(" \t")


# One character per line tells `scan` which lines it may skip in C. Outside containers, a line can change the
# block structure only if it is indented or starts (after up to three spaces) like a block marker ("1"); in a
# fence, only a line starting with a fence character can close it ("`"). "H" marks a level 1-3 heading at
# column 0, which outside containers is a heading whatever precedes it. Other lines are blank ("#") or plain
# text ("0"). The class is decided, conservatively, from a line's first four characters.
_MARKER_START = re.compile(
    r"[>\[<\t]|#+(?:[ \t]|$)|[-*+](?:[ \t]|$)|([-*_])[ \t]*(?:\1[ \t]*(?:\1|$)|$)"
    r"|=+[ \t]*$|\d+(?:[.)](?:[ \t]|$)|$)"
)


class _LineClasses(dict[str, str]):
    def __missing__(self, prefix: str) -> str:
        lead = prefix.lstrip(" ")
        if _TOP_HEADING.match(prefix):
            cls = "H"
        elif not lead:
            cls = "1" if len(prefix) == 4 else "#"
        elif lead[0] in "`~":
            cls = "`"
        elif _MARKER_START.match(lead):
            cls = "1"
        else:
            cls = "0"
        self[prefix] = cls
        return cls


_FIRST_FOUR = operator.itemgetter(slice(0, 4))
_TOP_HEADING = re.compile(r"#{1,3}(?:[ \t]|$)")  # at column 0: a level 1-3 heading wherever it stands
_HEADING_LINE = re.compile(r"H")
_STOP = re.compile(r"[1`]")
_NOT_PLAIN = re.compile(r"[^0]")
_SIMPLE_ITEM = re.compile(r"(?:[-+*]|(\d{1,9})[.)])( {1,4})(?=[^ \t])")


def _line_classes(lines: list[str]) -> str:
    return "".join(map(_LineClasses().__getitem__, map(_FIRST_FOUR, lines)))


def scan(lines: list[str], first: int) -> tuple[list[Heading], list[CodeBlock]]:
    headings: list[Heading] = []
    blocks: list[CodeBlock] = []
    stack: list[int] = []
    fresh: list[bool] = []
    leaf = _NONE
    leaf_start = 0
    leaf_depth = 0
    fence_char = ""
    fence_len = 0
    fence_info = ""
    html_end: re.Pattern[str] | None = None
    classes = _line_classes(lines)
    stop = _STOP.search
    not_plain = _NOT_PLAIN.search
    heading_lines = _HEADING_LINE.finditer
    n = len(lines)

    def close_leaf(end: int) -> None:
        if leaf == _FENCED:
            blocks.append(CodeBlock(leaf_start, end, fence_info, "fence", leaf_depth == 0))
        elif leaf == _INDENTED:
            blocks.append(CodeBlock(leaf_start, end, "", "indented", leaf_depth == 0))
        elif leaf == _HTML:
            blocks.append(CodeBlock(leaf_start, end, "", "html", leaf_depth == 0))

    i = first
    while i < n:
        cls = classes[i]
        if leaf == _PARA and cls == "0":
            # Plain text never ends a paragraph, inside containers or lazily outside them.
            found = not_plain(classes, i)
            i = n if found is None else found.start()
            continue
        if not stack:
            # Outside containers, settle the lines up to the next one that matters in one step.
            if leaf == _FENCED:
                j = classes.find("`", i)
                i = n if j < 0 else j
                if i == n:
                    break
            elif cls != "1" and leaf in (_NONE, _PARA):
                found = stop(classes, i)
                j = n if found is None else found.start()
                if j > i:
                    for h in heading_lines(classes, i, j):
                        k = h.start()
                        line = lines[k]
                        marks = len(line) - len(line.lstrip("#"))
                        title = line[marks:].strip(" \t")
                        if title[-1:] == "#":
                            title = _atx_text(line, marks)
                        headings.append(Heading(marks, title, k, k + 1, True))
                    if classes[j - 1] == "0":  # a paragraph is open at j; find where it began
                        b = max(classes.rfind("#", i, j), classes.rfind("H", i, j))
                        if b >= 0:
                            leaf_start = b + 1
                        elif leaf != _PARA:
                            leaf_start = i
                        leaf, leaf_depth = _PARA, 0
                    else:
                        leaf = _NONE
                    if j >= n:
                        break
                    i = j
                    cls = classes[i]
        elif cls == "#" and leaf in (_PARA, _NONE) and _QUOTE not in stack and True not in fresh:
            leaf = _NONE  # a blank line inside list items ends their paragraph and nothing else
            i += 1
            continue

        # Fast paths for the commonest structural lines, written at column 0: such a line matches no open
        # container, so unless a top-level fence or HTML block swallows it, it closes them all.
        line = lines[i]
        c0 = line[:1]
        if cls == "`" and (c0 == "`" or c0 == "~") and (stack or leaf in (_NONE, _PARA)):
            m = _FENCE.match(line)
            if m is not None:
                if stack:
                    close_leaf(i)
                    stack.clear()
                    fresh.clear()
                marker = m.group(1) or m.group(3)
                fence_char, fence_len = marker[0], len(marker)
                fence_info = (m.group(2) if m.group(1) else m.group(4)).strip()
                leaf, leaf_start, leaf_depth = _FENCED, i, 0
                i += 1
                continue
        elif (cls == "1" or cls == "H") and (stack or leaf in (_NONE, _PARA)):
            if c0 == "#":
                m = _ATX.match(line)
                if m is not None:
                    if stack:
                        close_leaf(i)
                        stack.clear()
                        fresh.clear()
                    marks = m.end(1)
                    title = line[marks:].strip(" \t")
                    if title[-1:] == "#":
                        title = _atx_text(line, marks)
                    headings.append(Heading(marks, title, i, i + 1, True))
                    leaf = _NONE
                    i += 1
                    continue
            elif c0 == "<" and line.startswith("<!--") and line.find("-->", 4) >= 0:
                if stack:
                    close_leaf(i)
                    stack.clear()
                    fresh.clear()
                blocks.append(CodeBlock(i, i + 1, "", "html", True))
                leaf = _NONE
                i += 1
                continue
            elif c0 == "-" and (stack or leaf == _NONE) and _HR.match(line):
                if stack:
                    close_leaf(i)
                    stack.clear()
                    fresh.clear()
                leaf = _NONE
                i += 1
                continue
            if (c0 in "-+*" or "0" <= c0 <= "9") and (
                not stack or (len(stack) == 1 and stack[0] != _QUOTE and leaf != _FENCED and leaf != _HTML)
            ):
                # A list item with plain text: a new top-level item (closing the previous one).
                m = _SIMPLE_ITEM.match(line)
                if m is not None:
                    content = line[m.end() :]
                    if (
                        content[0] not in "`~"
                        and _MARKER_START.match(content) is None
                        and (stack or leaf != _PARA or m.group(1) is None or int(m.group(1)) == 1)
                    ):
                        if stack:
                            close_leaf(i)
                        stack[:] = [m.end()]
                        fresh[:] = [False]
                        leaf, leaf_start, leaf_depth = _PARA, i, 1
                        i += 1
                        continue

        line = lines[i]
        if "\t" in line:
            line = line.expandtabs(4)  # CommonMark's tab stop; tabs matter only as indentation
        if stack:
            matched, rest = _match_containers(stack, fresh, line)
            if matched and rest.strip():
                fresh[:matched] = [False] * matched
            all_matched = matched == len(stack)
        else:
            matched, rest, all_matched = 0, line, True
        t = rest.lstrip(" ")
        ind = len(rest) - len(t)
        blank = not t or t.isspace()

        # Leaves that span lines swallow the line while their containers continue.
        if leaf == _FENCED:
            if all_matched:
                if ind <= 3 and t[:1] == fence_char:
                    run = len(t) - len(t.lstrip(fence_char))
                    if run >= fence_len and (run == len(t) or t[run:].isspace()):
                        close_leaf(i + 1)
                        leaf = _NONE
                i += 1
                continue
            close_leaf(i)
            leaf = _NONE
        elif leaf == _HTML:
            if all_matched:
                if html_end is None:
                    if blank:
                        close_leaf(i)
                        leaf = _NONE
                elif html_end.search(rest):
                    close_leaf(i + 1)
                    leaf = _NONE
                i += 1
                continue
            close_leaf(i)
            leaf = _NONE
        elif leaf == _INDENTED:
            if all_matched and (blank or ind >= 4):
                i += 1
                continue
            close_leaf(i)
            leaf = _NONE

        if not all_matched:
            outdent = sum(c for c in stack[matched:] if c != _QUOTE)
            list_indent = -1 if stack[-1] == _QUOTE else outdent - stack[-1]
            if leaf == _PARA and not _interrupts_paragraph(rest, outdent, list_indent):
                i += 1  # a lazy continuation line
                continue
            del stack[matched:]
            del fresh[matched:]
            if leaf_depth > matched:
                leaf = _NONE

        # Open new containers: block quotes and list items.
        while ind < 4 and t:
            c0 = t[0]
            if c0 == ">":
                rest = t[2:] if t[1:2] == " " else t[1:]
                stack.append(_QUOTE)
                fresh.append(False)
                leaf = _NONE
            elif c0 in "-+*" or "0" <= c0 <= "9":
                m = _LIST.match(t)
                if m is None or (c0 in "-*" and _HR.match(t)):
                    break
                content = t[m.end() :]
                empty = not content or content.isspace()
                if leaf == _PARA and (
                    empty or (m.group(2) is not None and int(m.group(2)) != 1) or _SETEXT.match(t)
                ):
                    break
                marker_end = ind + len(m.group(1))
                spaces = len(m.group(3))
                if empty:
                    width = marker_end + 1
                    rest = ""
                else:
                    width = marker_end + 1 if spaces > 4 else marker_end + spaces
                    rest = rest[width:]
                stack.append(width)
                fresh.append(empty)
                leaf = _NONE
            else:
                break
            t = rest.lstrip(" ")
            ind = len(rest) - len(t)
            blank = not t or t.isspace()

        depth = len(stack)
        i += 1
        if blank:
            if leaf == _PARA:
                leaf = _NONE
            continue
        if ind >= 4:
            if leaf != _PARA:
                leaf, leaf_start, leaf_depth = _INDENTED, i - 1, depth
            continue
        c0 = t[0]
        if leaf == _PARA and c0 in "=-" and _SETEXT.match(t):
            title = " ".join(x.strip() for x in lines[leaf_start : i - 1])
            headings.append(Heading(1 if c0 == "=" else 2, title, leaf_start, i, leaf_depth == 0))
            leaf = _NONE
            continue
        if c0 == "#":
            m = _ATX.match(t)
            if m is not None:
                headings.append(Heading(len(m.group(1)), _atx_text(t, m.end(1)), i - 1, i, depth == 0))
                leaf = _NONE
                continue
        elif c0 == "`" or c0 == "~":
            m = _FENCE.match(t)
            if m is not None:
                marker = m.group(1) or m.group(3)
                fence_char, fence_len = marker[0], len(marker)
                fence_info = (m.group(2) if m.group(1) else m.group(4)).strip()
                leaf, leaf_start, leaf_depth = _FENCED, i - 1, depth
                continue
        elif c0 == "<":
            opened = False
            for start, end, interrupts in _HTML_KINDS:
                if start.match(t) and (interrupts or leaf != _PARA):
                    html_end = end
                    leaf, leaf_start, leaf_depth = _HTML, i - 1, depth
                    if end is not None and end.search(t):
                        close_leaf(i)
                        leaf = _NONE
                    opened = True
                    break
            if opened:
                continue
        if (c0 == "-" or c0 == "*" or c0 == "_") and _HR.match(t):
            leaf = _NONE
            continue
        if c0 == "[" and leaf != _PARA and _REFERENCE.match(t):
            leaf = _NONE  # a link reference definition: neither paragraph nor heading text
            continue
        if leaf != _PARA:
            leaf, leaf_start, leaf_depth = _PARA, i - 1, depth

    close_leaf(n)
    return headings, blocks


def normalise(text: str) -> str:
    """The text markdown sees: one kind of newline, no NUL, no byte-order mark."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in text:
        text = text.replace("\0", "\ufffd")
    return text

"""Logging is cheap and still complete: JSON (orjson) for machines, plain lines on a terminal, lines written
in blocks, a warning or worse at once, and nothing lost when the process exits."""

from __future__ import annotations

import datetime
import io
import re
import subprocess
import sys

import orjson
import structlog
from structlog.testing import capture_logs

from bot.config.settings import Settings
from bot.telemetry import logs


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_auto_is_the_default_console_on_a_terminal_and_json_elsewhere() -> None:
    assert Settings().log_format == "auto"
    assert logs.resolve_format("auto", Terminal()) == "console"
    assert logs.resolve_format("auto", io.StringIO()) == "json"
    assert logs.resolve_format("console", io.StringIO()) == "console"
    assert logs.resolve_format("json", Terminal()) == "json"


def test_info_lines_wait_for_the_next_block_and_a_warning_writes_them_all_in_order() -> None:
    out = io.StringIO()
    before = structlog.get_config()
    try:
        logs.configure("info", "auto", stream=out)
        log = logs.get("test")
        log.info("delivery enqueued", delivery="d-1", job="delivery:github:d-1")
        log.info("second", n=2)
        log.debug("not at info")
        assert out.getvalue() == "" or out.getvalue().count("\n") <= 2  # the flusher may have run meanwhile
        log.warning("trouble", error=ValueError("bad"), counts={1: "one"})
        lines = [orjson.loads(line) for line in out.getvalue().splitlines()]
    finally:
        structlog.configure(**before)
    assert [line["event"] for line in lines] == ["delivery enqueued", "second", "trouble"]
    assert lines[0]["delivery"] == "d-1" and lines[0]["level"] == "info" and lines[0]["timestamp"]
    assert lines[2]["error"] == "ValueError('bad')" and lines[2]["counts"] == {"1": "one"}


def test_buffered_lines_go_out_within_the_flush_interval() -> None:
    out = io.StringIO()
    before = structlog.get_config()
    try:
        logs.configure("info", "json", stream=out)
        logs.get("test").info("quiet line")
        sink = logs._sink_for(out)
        sink.flush()  # what the flusher thread does every FLUSH_SECONDS
    finally:
        structlog.configure(**before)
    assert orjson.loads(out.getvalue())["event"] == "quiet line"
    assert logs.FLUSH_SECONDS <= 0.2


def test_a_process_that_exits_writes_its_last_lines() -> None:
    code = (
        "from bot.telemetry import logs\n"
        "logs.configure('info')\n"
        "log = logs.get('x')\n"
        "for i in range(3): log.info('line', i=i)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=True)
    assert [orjson.loads(line)["i"] for line in done.stdout.splitlines()] == [0, 1, 2]


def test_console_lines_on_a_terminal() -> None:
    out = Terminal()
    before = structlog.get_config()
    try:
        logs.configure("info", "auto", stream=out)
        logs.get("test").error("cannot enqueue: Redis unavailable", delivery="d-2")
    finally:
        structlog.configure(**before)
    assert "cannot enqueue: Redis unavailable" in out.getvalue() and "delivery=d-2" in out.getvalue()
    assert not out.getvalue().startswith("{")


def test_the_timestamp_is_iso_8601_utc_to_the_microsecond() -> None:
    """What structlog's ISO stamper wrote, formatted once per second: the time now, in UTC, as ``…Z``."""
    before = datetime.datetime.now(datetime.UTC)
    stamp = logs.timestamp(None, "info", {})["timestamp"]
    after = datetime.datetime.now(datetime.UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", stamp), stamp
    when = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert before - datetime.timedelta(milliseconds=1) <= when <= after


def test_a_standard_library_record_keeps_its_line_and_gathers_nothing_it_does_not_show() -> None:
    """arq writes two records per job: each is the same JSON line as before (level, logger, message, time),
    and the fields no line shows (caller's file and line, thread, process, task) are not gathered. A
    program that set up its own logging keeps them: its formatter may show them."""
    code = (
        "import logging\n"
        "from bot.telemetry import logs\n"
        "logs.configure('info', 'json')\n"
        "logging.getLogger('arq.worker').info('%6.2fs → %s', 0.01, 'job:1')\n"
        "print(logging._srcfile, logging.logThreads, logging.logProcesses, logging.logAsyncioTasks)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=True)
    # The log line goes out in a block (at exit or by the flusher), the print at once: either may be first.
    lines = done.stdout.decode().splitlines()
    record = orjson.loads(next(line for line in lines if line.startswith("{")))
    switches = next(line for line in lines if not line.startswith("{"))
    assert record["event"] == "  0.01s → job:1" and record["level"] == "info"
    assert record["logger"] == "arq.worker" and record["timestamp"]
    assert switches == "None False False False"
    own = "import logging\nlogging.basicConfig()\n" + code
    done = subprocess.run([sys.executable, "-c", own], capture_output=True, timeout=60, check=True)
    assert "None False False False" not in done.stdout.decode().splitlines()


def test_a_second_set_up_reaches_the_loggers_cached_before_it() -> None:
    """A logger is cached on its first use with the processor list it found; configuring again (a `steward`
    command run in a test's process) keeps that list and replaces its contents, so what captures or renders
    the lines reaches the cached logger too (tests/e2e/test_locked_threads_e2e.py missed a warning)."""
    before = structlog.get_config()
    try:
        logs.configure("info", "json", stream=io.StringIO())
        log = logs.get("cached")
        log.info("first use")
        logs.configure("info", "json", stream=io.StringIO())
        with capture_logs() as seen:
            log.warning("after the second set-up")
    finally:
        structlog.configure(**before)
    assert [entry["event"] for entry in seen] == ["after the second set-up"]

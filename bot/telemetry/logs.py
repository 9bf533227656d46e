"""Structured logging (structlog). Secrets never reach a log: settings hold them as SecretStr.

Logging is on the receiver's hot path (one line per accepted delivery), so it is made cheap: lines are
rendered to JSON by orjson, and written in blocks rather than one write and flush per line. A block goes
out every ``FLUSH_SECONDS``, at once for a warning or worse, and when the process exits; a process killed
with SIGKILL loses at most the last ``FLUSH_SECONDS`` of info lines. The console renderer (slower, for
people) is used only when the log goes to a terminal, unless asked for.
"""

from __future__ import annotations

import atexit
import logging
import sys
import threading
import time
from typing import IO, Any, Literal

import orjson
import structlog

FLUSH_SECONDS = 0.1
# A block this large goes out at once, whatever the clock says.
_BLOCK_BYTES = 64 * 1024

LogFormat = Literal["auto", "console", "json"]


class Sink:
    """Lines for one stream, written in blocks. Thread-safe: py-gitea's threads log too."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self._lines: list[bytes] = []
        self._size = 0
        self._lock = threading.Lock()

    def write(self, line: str | bytes, *, urgent: bool = False) -> None:
        data = line if isinstance(line, bytes) else line.encode("utf-8", "replace")
        with self._lock:
            self._lines.append(data)
            self._size += len(data) + 1
            full = self._size >= _BLOCK_BYTES
        if urgent or full:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            if not self._lines:
                return
            lines, self._lines, self._size = self._lines, [], 0
            block = b"\n".join(lines) + b"\n"
            try:
                # Whatever was printed to the text layer goes first, so the order of lines is kept.
                self.stream.flush()
                raw = getattr(self.stream, "buffer", None)
                if raw is not None:
                    raw.write(block)
                    raw.flush()
                else:
                    self.stream.write(block.decode("utf-8", "replace"))
                    self.stream.flush()
            except (ValueError, OSError):
                pass  # the stream was closed (a test's capture ended, a closed pipe): nothing to do


# The ISO 8601 UTC timestamp structlog's ``TimeStamper(fmt="iso")`` writes (``2026-01-02T03:04:05.678901Z``),
# with the date and time of the current second formatted once per second rather than once per line: one
# line per delivery is on the receiver's hot path.
_second: tuple[int, str] = (-1, "")


def timestamp(_: Any, __: str, event_dict: Any) -> Any:
    global _second
    now = time.time()
    second = int(now)
    cached = _second
    if cached[0] != second:
        cached = _second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    event_dict["timestamp"] = f"{cached[1]}.{int((now - second) * 1_000_000):06d}Z"
    return event_dict


_URGENT = frozenset({"warning", "warn", "error", "err", "critical", "fatal", "exception", "failure"})


class SinkLogger:
    """structlog's wrapped logger: hands each rendered line to a ``Sink``."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink

    def msg(self, message: str | bytes) -> None:
        self._sink.write(message)

    def _urgent(self, message: str | bytes) -> None:
        self._sink.write(message, urgent=True)

    log = debug = info = msg
    warn = warning = error = err = critical = fatal = exception = failure = _urgent


class SinkHandler(logging.Handler):
    """The standard library's records (uvicorn's, arq's) through a ``Sink``: no flush per line either."""

    def __init__(self, sink: Sink) -> None:
        super().__init__()
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            # uvicorn's few lifecycle lines go out at once: it ends a SIGTERM by re-raising the signal,
            # and a process killed by a signal runs no exit hook to flush them.
            urgent = record.levelno >= logging.WARNING or record.name.startswith("uvicorn")
            self.sink.write(self.format(record), urgent=urgent)
        except Exception:
            self.handleError(record)


_sinks: dict[int, Sink] = {}
_flusher: threading.Thread | None = None
_guard = threading.Lock()


def _sink_for(stream: IO[str]) -> Sink:
    with _guard:
        sink = _sinks.get(id(stream))
        if sink is None or sink.stream is not stream:
            if sink is not None:
                sink.flush()
            sink = _sinks[id(stream)] = Sink(stream)
        return sink


def flush() -> None:
    """Write out every buffered line now (at exit, before a process hands its output over)."""
    for sink in list(_sinks.values()):
        sink.flush()


def _flush_forever() -> None:
    while True:
        time.sleep(FLUSH_SECONDS)
        flush()


def _start_flusher() -> None:
    global _flusher
    with _guard:
        if _flusher is None:
            _flusher = threading.Thread(target=_flush_forever, name="steward-log-flush", daemon=True)
            _flusher.start()
            atexit.register(flush)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def resolve_format(fmt: str, stream: IO[str]) -> Literal["console", "json"]:
    """``auto``: the console renderer for a person at a terminal, JSON for everything else."""
    if fmt == "auto":
        return "console" if _is_terminal(stream) else "json"
    return "json" if fmt == "json" else "console"


def renderer(fmt: Literal["console", "json"]) -> Any:
    if fmt == "json":
        return structlog.processors.JSONRenderer(serializer=orjson.dumps, option=orjson.OPT_NON_STR_KEYS)
    return structlog.dev.ConsoleRenderer(colors=False)


def _text_renderer(fmt: Literal["console", "json"]) -> Any:
    """The same rendering for the standard library's records, as text (a ``Formatter`` returns str)."""
    if fmt == "json":
        return structlog.processors.JSONRenderer(
            serializer=lambda obj, **_: orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode()
        )
    return structlog.dev.ConsoleRenderer(colors=False)


# Libraries that log every request at INFO (httpx's "HTTP Request: …"): Steward counts forge calls in
# metrics (steward_forge_calls_total), so their lines show from WARNING up unless the level is debug.
CHATTY = ("httpx", "httpx2", "httpcore", "urllib3")


def configure(level: str = "info", fmt: str = "auto", *, stream: Any = None) -> None:
    """Logs go to standard output (``stream`` to move them: a command's own output keeps stdout). The
    standard library's records — arq's per-job lines, uvicorn's start and stop, py-gitea's, httpx's — go
    through the same renderer to the same stream, so ``STEWARD_LOG_FORMAT=json`` is one JSON object a line
    whoever logged it."""
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    target: IO[str] = stream or sys.stdout
    chosen = resolve_format(fmt, target)
    root = logging.getLogger()
    ours = [h for h in root.handlers if isinstance(h, SinkHandler)]
    if not root.handlers or ours:  # as logging.basicConfig: a program that set up logging keeps its own
        for old in ours:
            root.removeHandler(old)
        handler = SinkHandler(_sink_for(target))
        handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                processors=[
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    _text_renderer(chosen),
                ],
                foreign_pre_chain=[
                    structlog.stdlib.add_log_level,
                    structlog.stdlib.add_logger_name,
                    timestamp,
                    structlog.processors.format_exc_info,
                ],
            )
        )
        root.addHandler(handler)
        root.setLevel(numeric)
        # What a standard-library record would gather for a formatter that shows it: the renderer above shows
        # none of it (level, logger, message, time), so it is not gathered. These are the logging module's
        # documented switches ("Optimization" in its HOWTO); arq writes two records per job.
        logging._srcfile = None  # no stack walk for the caller's file and line
        logging.logThreads = False
        logging.logProcesses = False
        logging.logMultiprocessing = False
        logging.logAsyncioTasks = False  # type: ignore[attr-defined]  # 3.12+, not in typeshed yet
    for name in CHATTY:
        logging.getLogger(name).setLevel(numeric if numeric <= logging.DEBUG else logging.WARNING)
    sink = _sink_for(target)
    _start_flusher()
    # The chain is replaced inside the list structlog holds, not by a new list: a logger cached on first use
    # keeps the list it found, so a second set-up in one process (a `steward` command run in a test's process)
    # reaches the loggers cached before it too — and so does structlog.testing.capture_logs, which swaps the
    # list's contents. (Their level and stream stay those of their first use.)
    held = structlog.get_config()["processors"]
    processors: list[Any] = held if isinstance(held, list) else []
    processors[:] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        timestamp,
        structlog.processors.format_exc_info,
        renderer(chosen),
    ]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=lambda *_: SinkLogger(sink),
        cache_logger_on_first_use=True,
    )


def get(name: str = "steward") -> Any:
    return structlog.get_logger(name)

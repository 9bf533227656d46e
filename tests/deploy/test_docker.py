"""The Docker image, checked without a Docker engine: its inputs exist and reach the build context,
it has the shape the issue asks for, and its health check tells a healthy process from a sick one.
(hadolint lints the Dockerfile itself: `make lint-deploy`.)"""

from __future__ import annotations

import importlib.util
import shlex
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType

import pytest

from tests.deploy.dockerfile import DockerIgnore, copies, instructions

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
IGNORE = DockerIgnore((ROOT / ".dockerignore").read_text())


def _final_stage() -> list[tuple[str, str]]:
    stages: list[list[tuple[str, str]]] = []
    for instruction in instructions(DOCKERFILE):
        if instruction.keyword == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((instruction.keyword, instruction.arguments))
    return stages[-1]


def _context_files(path: Path) -> list[str]:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return [p.relative_to(ROOT).as_posix() for p in files]


# --- the build context ---------------------------------------------------------------------------


def test_every_path_the_dockerfile_copies_exists_and_is_in_the_build_context() -> None:
    sources = [s for c in copies(DOCKERFILE) if "from" not in c.flags for s in c.sources]
    assert sources, "the Dockerfile copies nothing from the context?"
    for source in sources:
        path = ROOT / source
        assert path.exists(), f"the Dockerfile copies {source}, which does not exist"
        assert not IGNORE.excluded(source), f".dockerignore leaves {source} out of the build context"
        sent = [f for f in _context_files(path) if not IGNORE.excluded(f)]
        assert sent, f"nothing under {source} reaches the build context"
        python = [f for f in _context_files(path) if f.endswith(".py") and "__pycache__" not in f]
        assert all(not IGNORE.excluded(f) for f in python), f"some of {source}'s modules are left out"


def test_the_package_data_reaches_the_image() -> None:
    for marker in ("bot/py.typed", "handlers/py.typed", "README.md", "pyproject.toml"):
        assert not IGNORE.excluded(marker), marker


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".venv/bin/python",
        ".env",
        "tests/conftest.py",
        ".pytest_cache/v/cache/nodeids",
        ".mypy_cache/3.13/bot/receiver/app.meta.json",
        "bot/receiver/__pycache__/app.cpython-313.pyc",
        "handlers/backlog/__pycache__/bot.cpython-313.pyc",
        "sandbox-state.json",
        "charts/steward/values.yaml",
        ".cache/helm/helm",
    ],
)
def test_the_build_context_leaves_out_what_the_image_must_not_hold(path: str) -> None:
    assert IGNORE.excluded(path)


def test_the_dockerignore_rules_follow_dockers_semantics() -> None:
    rules = DockerIgnore("*\n!keep/\nkeep/**/*.log\n!keep/important.log\n/abs\n")
    assert rules.excluded("other.txt")
    assert rules.excluded("dir/deep/file")
    assert not rules.excluded("keep/a.py")
    assert rules.excluded("keep/x/y.log")
    assert rules.excluded("keep/y.log")  # `**/` matches no directory too
    assert not rules.excluded("keep/important.log")


# --- the image's shape ---------------------------------------------------------------------------


def test_the_image_is_built_in_stages_on_python_313_slim() -> None:
    froms = [i.arguments for i in instructions(DOCKERFILE) if i.keyword == "FROM"]
    assert len(froms) >= 2
    assert "ARG PYTHON_IMAGE=python:3.13-slim" in DOCKERFILE
    assert all(f.split()[0] == "${PYTHON_IMAGE}" for f in froms)


def test_dependencies_come_from_the_lock_without_resolving() -> None:
    runs = [i.arguments for i in instructions(DOCKERFILE) if i.keyword == "RUN"]
    installs = [r for r in runs if "pip install" in r]
    assert any("--no-deps" in r and "requirements.lock" in r for r in installs)
    assert all("--no-deps" in r for r in installs), "every pip install must take the lock's versions"
    assert any("pip check" in r for r in runs)


def test_the_final_stage_runs_steward_serve_as_an_unprivileged_user() -> None:
    final = _final_stage()
    users = [arguments for keyword, arguments in final if keyword == "USER"]
    assert users, "the final stage sets no USER"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) >= 10000, "a fixed numeric UID lets runAsNonRoot check it"
    assert ("ENTRYPOINT", '["steward"]') in final
    assert ("CMD", '["serve"]') in final
    assert ("EXPOSE", "8000") in final


def test_the_environment_suits_a_read_only_container() -> None:
    env: dict[str, str] = {}
    for keyword, arguments in _final_stage():
        if keyword == "ENV":
            env.update(dict(word.split("=", 1) for word in shlex.split(arguments)))
    assert env["STEWARD_HOST"] == "0.0.0.0"
    assert env["STEWARD_LOG_FORMAT"] == "json"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["PYTHONUNBUFFERED"] == "1"
    assert env["HOME"] == "/tmp"
    assert env["PATH"].startswith("/opt/steward/bin:")


def test_the_health_check_runs_the_shipped_script_with_python() -> None:
    checks = [arguments for keyword, arguments in _final_stage() if keyword == "HEALTHCHECK"]
    assert len(checks) == 1
    assert '["python", "/opt/steward/healthcheck.py"]' in checks[0]
    shipped = {c.destination: c.sources for c in copies(DOCKERFILE) if "from" not in c.flags}
    assert shipped["/opt/steward/healthcheck.py"] == ("deploy/docker/healthcheck.py",)


# --- the health check script ----------------------------------------------------------------------


def _load_healthcheck() -> ModuleType:
    spec = importlib.util.spec_from_file_location("healthcheck", ROOT / "deploy/docker/healthcheck.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


healthcheck = _load_healthcheck()


class _Steward(BaseHTTPRequestHandler):
    ready = True

    def do_GET(self) -> None:
        ok = self.path in {"/healthz", "/metrics"} or (self.path == "/readyz" and self.ready)
        self.send_response(200 if ok else 503)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def steward_port() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Steward)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield str(server.server_address[1])
    server.shutdown()
    server.server_close()


def _closed_port() -> str:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Steward)
    port = str(server.server_address[1])
    server.server_close()
    return port


def test_a_receiver_is_healthy_when_healthz_answers(steward_port: str) -> None:
    assert healthcheck.healthy("serve", False, {"STEWARD_PORT": steward_port})
    assert healthcheck.healthy("run", False, {"STEWARD_PORT": steward_port})
    assert not healthcheck.healthy("serve", False, {"STEWARD_PORT": _closed_port()})


def test_a_receiver_is_ready_only_when_readyz_says_so(
    steward_port: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert healthcheck.healthy("serve", True, {"STEWARD_PORT": steward_port})
    monkeypatch.setattr(_Steward, "ready", False)
    assert not healthcheck.healthy("serve", True, {"STEWARD_PORT": steward_port})


def test_a_worker_with_a_metrics_port_is_asked_there(steward_port: str) -> None:
    assert healthcheck.healthy("worker", False, {"STEWARD_WORKER_METRICS_PORT": steward_port})
    assert not healthcheck.healthy("worker", False, {"STEWARD_WORKER_METRICS_PORT": _closed_port()})


def test_a_worker_without_metrics_is_ready_when_redis_answers(redis_url: str) -> None:
    assert healthcheck.healthy("worker", True, {"STEWARD_REDIS_URL": redis_url})
    assert not healthcheck.healthy("worker", True, {"STEWARD_REDIS_URL": "redis://127.0.0.1:1/0"})
    assert healthcheck.healthy("worker", False, {"STEWARD_REDIS_URL": "redis://127.0.0.1:1/0"})


def test_the_role_is_read_from_the_containers_first_process(tmp_path: Path) -> None:
    cmdline = tmp_path / "cmdline"
    cmdline.write_bytes(b"/opt/steward/bin/python\0/opt/steward/bin/steward\0worker\0")
    assert healthcheck.role_of_pid1(cmdline) == "worker"
    cmdline.write_bytes(b"/sbin/docker-init\0--\0steward\0worker\0--burst\0")
    assert healthcheck.role_of_pid1(cmdline) == "worker"
    cmdline.write_bytes(b"/opt/steward/bin/python\0/opt/steward/bin/steward\0serve\0")
    assert healthcheck.role_of_pid1(cmdline) == "serve"
    assert healthcheck.role_of_pid1(tmp_path / "missing") == "serve"


def test_a_bad_role_is_a_usage_error() -> None:
    assert healthcheck.main(["sideways"]) == 2

"""Gitea's transport (``_Transport``, the requests-like shim py-gitea speaks through): what reaches Gitea,
and what Steward concludes when an answer does not come back. A connection that was never made means
nothing reached Gitea, so even a comment may be tried again; a connection dropped after the request was
written may have posted it, so a comment is not sent twice. A keep-alive connection Gitea closed while
idle is replaced before a request is written to it, so it costs no failed write."""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
import threading
from collections.abc import Callable, Iterator

import pytest
from requests.utils import DEFAULT_CA_BUNDLE_PATH

from bot.forge import ForgeUnavailable
from bot.forge.gitea_transport import GiteaCalls, _Transport, _TransportFailure
from bot.forge.retry import RetryPolicy
from bot.telemetry import metrics

OK = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"id": 42}\n'


def read_request(conn: socket.socket) -> bytes:
    """One HTTP request off `conn` (head and Content-Length body); b"" when the peer closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ),
        0,
    )
    while len(body) < length:
        body += conn.recv(65536)
    return head


class Server:
    """A listening socket; each accepted connection is handed to `serve` on a thread of its own. Counts the
    connections and keeps the heads of the requests read."""

    def __init__(self, serve: Callable[[Server, socket.socket], None]) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.serve = serve
        self.connections = 0
        self.requests: list[bytes] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._run, args=(conn,), daemon=True).start()

    def _run(self, conn: socket.socket) -> None:
        with conn:
            self.serve(self, conn)

    def read(self, conn: socket.socket) -> bytes:
        head = read_request(conn)
        if head:
            self.requests.append(head)
        return head

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    made: list[Server] = []
    yield made
    for server in made:
        server.close()


def keep_alive(server: Server, conn: socket.socket) -> None:
    while server.read(conn):
        conn.sendall(OK)


def answer_once_then_close_while_idle(server: Server, conn: socket.socket) -> None:
    if server.read(conn):
        conn.sendall(OK)  # a keep-alive answer; then the server drops the idle connection


def read_then_drop(server: Server, conn: socket.socket) -> None:
    server.read(conn)  # the request arrived; no answer


def refused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def transport(url: str, read_timeout: float = 5.0) -> _Transport:
    return _Transport(url, timeout=(2.0, read_timeout))


def test_requests_share_one_keep_alive_connection_and_carry_the_user_agent(servers: list[Server]) -> None:
    server = Server(keep_alive)
    servers.append(server)
    http = transport(server.url)
    try:
        for _ in range(3):
            answer = http.get(
                f"{server.url}/api/v1/user", headers={"Authorization": "token t"}, params={"a": 1}
            )
            assert answer.status_code == 200 and answer.ok and answer.json() == {"id": 42}
        assert server.connections == 1
        assert server.requests[0].startswith(b"GET /api/v1/user?a=1 HTTP/1.1")
        assert b"User-Agent: steward-bot" in server.requests[0]
        assert b"Authorization: token t" in server.requests[0]
    finally:
        http.close()


def test_a_keep_alive_connection_gitea_closed_while_idle_is_replaced_before_a_write(
    servers: list[Server],
) -> None:
    server = Server(answer_once_then_close_while_idle)
    servers.append(server)
    http = transport(server.url)
    try:
        http.get(f"{server.url}/api/v1/user")
        idle = http._local.conn.sock
        assert select.select([idle], [], [], 5.0)[0], "Gitea closed the idle connection"
        answer = http.post(f"{server.url}/api/v1/repos/o/r/issues/1/comments", data='{"body": "hi"}')
        assert answer.status_code == 200
        assert server.connections == 2
        assert len(server.requests) == 2, "the comment was written once, on a fresh connection"
    finally:
        http.close()


def test_a_refused_connection_is_known_not_to_have_reached_gitea() -> None:
    url = f"http://127.0.0.1:{refused_port()}"
    http = transport(url)
    with pytest.raises(_TransportFailure) as failure:
        http.post(f"{url}/api/v1/repos/o/r/issues/1/comments", data="{}")
    assert failure.value.sent is False


def test_a_connection_dropped_after_the_request_may_have_reached_gitea(servers: list[Server]) -> None:
    server = Server(read_then_drop)
    servers.append(server)
    http = transport(server.url)
    with pytest.raises(_TransportFailure) as failure:
        http.post(f"{server.url}/api/v1/repos/o/r/issues/1/comments", data="{}")
    assert failure.value.sent is True
    http.close()


def test_no_answer_within_the_read_timeout_may_have_reached_gitea(servers: list[Server]) -> None:
    release = threading.Event()

    def stall(server: Server, conn: socket.socket) -> None:
        server.read(conn)
        release.wait(5)

    server = Server(stall)
    servers.append(server)
    http = transport(server.url, read_timeout=0.2)
    try:
        with pytest.raises(_TransportFailure) as failure:
            http.get(f"{server.url}/api/v1/user")
        assert failure.value == _TransportFailure("ReadTimeout", sent=True)
    finally:
        release.set()
        http.close()


def transport_errors(method: str) -> float:
    return metrics.FORGE_CALLS.labels("gitea", method, "transport_error")._value.get()


def test_a_comment_whose_connection_dropped_is_not_sent_again(servers: list[Server]) -> None:
    server = Server(read_then_drop)
    servers.append(server)
    calls = GiteaCalls(server.url, "tok", policy=RetryPolicy(3, 0.01, 0.05))
    try:
        with pytest.raises(ForgeUnavailable):
            asyncio.run(calls._post("/repos/o/r/issues/1/comments", "comment", {"body": "hi"}))
        assert len(server.requests) == 1
    finally:
        calls.close()


def test_a_comment_whose_connection_was_refused_is_tried_again() -> None:
    url = f"http://127.0.0.1:{refused_port()}"
    calls = GiteaCalls(url, "tok", policy=RetryPolicy(3, 0.01, 0.05))
    before = transport_errors("POST")
    try:
        with pytest.raises(ForgeUnavailable):
            asyncio.run(calls._post("/repos/o/r/issues/1/comments", "comment", {"body": "hi"}))
        assert transport_errors("POST") - before == 3, "every try was made: none reached Gitea"
    finally:
        calls.close()


def proxy_server(servers: list[Server], answer: bytes) -> Server:
    def serve(server: Server, conn: socket.socket) -> None:
        if server.read(conn):
            conn.sendall(answer)

    server = Server(serve)
    servers.append(server)
    return server


def test_an_http_gitea_is_reached_through_the_environments_proxy(
    servers: list[Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = proxy_server(servers, OK)
    monkeypatch.setenv("HTTP_PROXY", f"http://user:p%40ss@127.0.0.1:{proxy.port}")
    monkeypatch.setenv("NO_PROXY", "")
    http = transport("http://gitea.example:3000")
    try:
        assert http.get("http://gitea.example:3000/api/v1/user").json() == {"id": 42}
        head = proxy.requests[0]
        assert head.startswith(b"GET http://gitea.example:3000/api/v1/user HTTP/1.1")
        assert b"Proxy-Authorization: Basic dXNlcjpwQHNz" in head  # user:p@ss
    finally:
        http.close()


def test_an_https_gitea_is_tunnelled_through_the_environments_proxy(
    servers: list[Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = proxy_server(servers, b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
    monkeypatch.setenv("NO_PROXY", "")
    http = transport("https://gitea.example")
    with pytest.raises(_TransportFailure) as failure:
        http.post("https://gitea.example/api/v1/repos/o/r/issues/1/comments", data="{}")
    assert proxy.requests[0].startswith(b"CONNECT gitea.example:443 HTTP/1.1")
    assert failure.value.sent is False, "the proxy refused the tunnel: nothing reached Gitea"


def test_tls_is_verified_against_the_bundle_the_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", DEFAULT_CA_BUNDLE_PATH)
    http = transport("https://gitea.example")
    assert http._ssl is not None
    assert http._ssl.verify_mode == ssl.CERT_REQUIRED and http._ssl.check_hostname
    assert http.verify == DEFAULT_CA_BUNDLE_PATH


def redirecting(status: int, location: str) -> Callable[[Server, socket.socket], None]:
    """Answers requests for /api/v1/repos/old/… with `status` to `location`, and the rest with OK."""

    def serve(server: Server, conn: socket.socket) -> None:
        while head := server.read(conn):
            if b" /api/v1/repos/old/" in head.split(b"\r\n")[0]:
                moved = f"HTTP/1.1 {status} Moved\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n"
                conn.sendall(moved.encode())
            else:
                conn.sendall(OK)

    return serve


def test_a_renamed_repository_s_redirect_is_followed_with_the_same_write(servers: list[Server]) -> None:
    server = Server(redirecting(307, "/api/v1/repos/new/r/issues/1/comments"))
    servers.append(server)
    http = transport(server.url)
    try:
        answer = http.post(
            f"{server.url}/api/v1/repos/old/r/issues/1/comments",
            headers={"Authorization": "token t", "Content-type": "application/json"},
            data='{"body": "hi"}',
        )
        assert answer.status_code == 200 and http.last_response is answer
        assert server.requests[1].startswith(b"POST /api/v1/repos/new/r/issues/1/comments HTTP/1.1")
        assert b"Authorization: token t" in server.requests[1]
        assert b"Content-Length: 14" in server.requests[1]
    finally:
        http.close()


def test_a_see_other_redirect_is_read_with_a_get_and_no_body(servers: list[Server]) -> None:
    server = Server(redirecting(303, "/api/v1/repos/new/r"))
    servers.append(server)
    http = transport(server.url)
    try:
        assert http.post(f"{server.url}/api/v1/repos/old/r", data="{}").status_code == 200
        assert server.requests[1].startswith(b"GET /api/v1/repos/new/r HTTP/1.1")
        assert b"Content-Length" not in server.requests[1]
    finally:
        http.close()


def test_a_redirect_to_another_host_is_not_followed(servers: list[Server]) -> None:
    server = Server(redirecting(302, "http://elsewhere.example/api/v1/repos/new/r"))
    servers.append(server)
    http = transport(server.url)
    try:
        assert http.get(f"{server.url}/api/v1/repos/old/r").status_code == 302
        assert len(server.requests) == 1
    finally:
        http.close()


def test_a_proxy_the_transport_cannot_speak_is_refused_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "socks5://127.0.0.1:1080")
    monkeypatch.setenv("NO_PROXY", "")
    with pytest.raises(ValueError, match="only http:// proxies"):
        GiteaCalls("https://gitea.example", "tok")

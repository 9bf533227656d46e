"""Gitea's transport (the requests-like shim py-gitea speaks through) reads the environment's proxy and CA
settings once, when it is made, not on every request (issue 28: requests' per-request environment look-ups
were a fifth of its CPU per request). That the proxy is then used: tests/unit/test_gitea_transport.py."""

from __future__ import annotations

import pytest

from bot.forge.gitea_transport import GiteaCalls


def test_the_session_takes_the_environments_proxy_once_and_then_stops_reading_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")
    calls = GiteaCalls("https://gitea.example", "tok")
    try:
        session = calls._session
        assert session.proxies.get("https") == "http://proxy.example:3128"
        assert session.verify == "/etc/ssl/certs/ca-certificates.crt"
        assert session.trust_env is False, "the environment is not read again per request"
    finally:
        calls.close()


def test_a_gitea_the_proxy_exempts_gets_no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "gitea.internal")
    calls = GiteaCalls("http://gitea.internal:3000", "tok")
    try:
        assert not calls._session.proxies.get("http")
        assert calls._session.trust_env is False
    finally:
        calls.close()

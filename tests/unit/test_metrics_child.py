"""A metric's child is looked up once per process (``metrics.child``) and counts what ``labels()`` counted."""

from __future__ import annotations

from bot.telemetry import metrics


def test_a_cached_child_counts_into_the_exported_metric() -> None:
    def value() -> float:
        found = metrics.REGISTRY.get_sample_value(
            "steward_forge_calls_total", {"forge": "github", "method": "PATCH", "status": "418"}
        )
        return found or 0.0

    before = value()
    first = metrics.child(metrics.FORGE_CALLS, "github", "PATCH", "418")
    assert metrics.child(metrics.FORGE_CALLS, "github", "PATCH", "418") is first, "looked up once"
    assert first is metrics.FORGE_CALLS.labels("github", "PATCH", "418")
    first.inc()
    metrics.child(metrics.FORGE_CALLS, "github", "PATCH", "418").inc()
    assert value() == before + 2

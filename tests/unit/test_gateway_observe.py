"""The pure parts of the gateway's observability: the replica's name, the call-log line, and
what `--otel` says when the OTEL_* variables or the fleet extra are wrong (no provider is
installed here: tests/integration/test_gateway_observe.py exports for real)."""

from __future__ import annotations

import json
import sys

import pytest

from plugman.core.errors import UsageError
from plugman.runtime.gateway.observe import MAX_FIELD, Call, CallLog, replica_name
from plugman.runtime.gateway.telemetry import Telemetry, start


def test_the_replica_is_the_flag_else_the_variable_else_the_host() -> None:
    assert replica_name("gw-1", {"PLUGMAN_REPLICA": "pod-2"}) == "gw-1"
    assert replica_name(None, {"PLUGMAN_REPLICA": " pod-2 "}) == "pod-2"
    import socket

    assert replica_name(None, {"PLUGMAN_REPLICA": ""}) == (socket.gethostname() or "gateway")
    assert len(replica_name("x" * 1000, {})) == MAX_FIELD


def test_a_line_holds_the_fields_and_only_those() -> None:
    log = CallLog("gw-1", ())
    line = log.line(Call("alice", "notes", "add", 0.0123456, "ok", "ab" * 16), 1_800_000_000.5)
    assert line.endswith("\n") and line.count("\n") == 1
    assert json.loads(line) == {
        "time": "2027-01-15T08:00:00.500Z",
        "replica": "gw-1",
        "sub": "alice",
        "server": "notes",
        "tool": "add",
        "ms": 12.35,
        "outcome": "ok",
        "trace": "ab" * 16,
    }
    assert "trace" not in json.loads(log.line(Call(None, "", "x", 0.0, "unknown"), 0.0))


def test_metrics_do_not_take_an_unknown_tool_name_as_a_label() -> None:
    class Instrument:
        def __init__(self) -> None:
            self.labels: list[dict[str, str]] = []

        def add(self, _: float, labels: dict[str, str]) -> None:
            self.labels.append(labels)

        record = add

    counter, histogram = Instrument(), Instrument()
    telemetry = Telemetry(calls=counter, duration=histogram)
    telemetry.record(Call(None, "", "made-up\nname", 0.1, "unknown"))
    telemetry.record(Call(None, "notes", "add", 0.1, "ok"))
    assert [labels["gen_ai.tool.name"] for labels in counter.labels] == ["", "add"]
    assert histogram.labels == counter.labels


def test_an_exporter_plugman_does_not_speak_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as raised:
        start({"OTEL_TRACES_EXPORTER": "zipkin"}, "gw-1")
    assert "OTEL_TRACES_EXPORTER" in str(raised.value)
    assert raised.value.hint is not None and "otlp" in raised.value.hint


def test_disabled_sdk_installs_nothing() -> None:
    found = start({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "zipkin"}, "gw-1")
    assert found == Telemetry()


def test_without_the_fleet_extra_otel_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.resources", None)  # ImportError
    with pytest.raises(UsageError) as raised:
        start({}, "gw-1")
    assert raised.value.hint == "pip install 'plugman[fleet]'"

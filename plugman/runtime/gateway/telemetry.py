"""OpenTelemetry traces and metrics of the gateway (`plugman mcp serve --otel`), exported over
OTLP/HTTP to the organization's collector.

Off unless `--otel` is given: nothing of the OpenTelemetry SDK is imported otherwise (the stdio
gateway and the CLI start no slower), and the SDK's own middleware stays the no-op it is without
a tracer provider. Setting OTEL_EXPORTER_OTLP_ENDPOINT alone does not turn it on (an environment
made for other tools must not make a developer's gateway send its calls somewhere); the Helm chart
passes `--otel`. It needs the fleet extra: `pip install 'plugman[fleet]'`.

Configured by the standard variables, read by the OpenTelemetry SDK itself:
OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318; `/v1/traces` and `/v1/metrics` are
appended), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / _METRICS_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS
(an API key goes there, never on the command line), OTEL_SERVICE_NAME (default plugman-gateway),
OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_SCHEDULE_DELAY, OTEL_METRIC_EXPORT_INTERVAL.
OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER take `otlp` (default) or `none`;
OTEL_SDK_DISABLED=true turns both off. The resource carries `service.instance.id`: the replica.
A replica that stops exports what is left for at most SHUTDOWN seconds (a collector that is
down does not hold it).

Traces (W3C trace context, end to end):
- A span per MCP message, by the SDK's `OpenTelemetryMiddleware` (`tools/call <name>`, kind
  SERVER, with `mcp.method.name`, `gen_ai.tool.name`, ...). Its parent is the client's
  `traceparent` in the request's `_meta` (what MCP 2026-07-28 specifies and the SDK reads), else
  the HTTP request's `traceparent` header (`HeaderContext`, for clients and proxies that only set
  the header).
- The gateway's request to the backend is a child span (`MCP send tools/call <tool>`, kind
  CLIENT, made by the SDK's client), whose context goes on to the backend in the forwarded
  request's `_meta.traceparent`.
- The span of a tool call also carries `plugman.server` and `plugman.outcome`.

Metrics: `plugman.gateway.calls` (counter) and `plugman.gateway.call.duration` (histogram,
seconds), both by `mcp.server`, `gen_ai.tool.name` and `plugman.outcome`; a tool name no backend
offers is recorded as "" (a client cannot grow the metrics' cardinality with made-up names).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plugman.core.errors import UsageError

if TYPE_CHECKING:
    from plugman.runtime.gateway.observe import Call

SERVICE = "plugman-gateway"
SHUTDOWN = 3.0  # seconds to export what is left when the replica stops
EXPORTERS = ("otlp", "none")


@dataclass
class Telemetry:
    """The providers while serving, and the instruments calls are recorded with."""

    tracer: Any = None  # opentelemetry.sdk.trace.TracerProvider
    meter: Any = None  # opentelemetry.sdk.metrics.MeterProvider
    calls: Any = None  # Counter
    duration: Any = None  # Histogram

    def record(self, call: Call) -> None:
        if self.calls is None:
            return
        tool = "" if call.outcome == "unknown" else call.tool
        labels = {"mcp.server": call.server, "gen_ai.tool.name": tool}
        labels["plugman.outcome"] = call.outcome
        self.calls.add(1, labels)
        self.duration.record(call.seconds, labels)

    def shutdown(self) -> None:
        """Export what is left, for at most SHUTDOWN seconds: a collector that is down must not
        hold a stopping replica (the exporters would retry for 10 s each)."""
        providers = [p for p in (self.tracer, self.meter) if p is not None]
        if not providers:
            return
        thread = threading.Thread(
            target=lambda: [p.shutdown() for p in providers], name="otel-shutdown", daemon=True
        )
        thread.start()
        thread.join(SHUTDOWN)


def start(env: Mapping[str, str], replica: str) -> Telemetry:
    """Install the tracer and meter providers the variables ask for (see above)."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return Telemetry()
    traces, metrics = (_exporter(env, f"OTEL_{kind}_EXPORTER") for kind in ("TRACES", "METRICS"))
    try:
        # lazy: the OpenTelemetry SDK (fleet extra), only with --otel
        from opentelemetry import metrics as metrics_api
        from opentelemetry import trace as trace_api
        from opentelemetry.sdk.resources import Resource
    except ImportError as exc:
        raise _missing(exc) from None
    service = env.get("OTEL_SERVICE_NAME", "").strip() or SERVICE
    resource = Resource.create({"service.name": service, "service.instance.id": replica})
    found = Telemetry()
    if traces:
        found.tracer = _tracer(resource)
        trace_api.set_tracer_provider(found.tracer)
    if metrics:
        found.meter = _meter(resource)
        metrics_api.set_meter_provider(found.meter)
        meter = found.meter.get_meter("plugman.gateway")
        found.calls = meter.create_counter(
            "plugman.gateway.calls", unit="{call}", description="Tool calls through the gateway"
        )
        found.duration = meter.create_histogram(
            "plugman.gateway.call.duration", unit="s", description="How long a tool call took"
        )
    return found


def _exporter(env: Mapping[str, str], variable: str) -> bool:
    chosen = env.get(variable, "").strip().lower() or "otlp"
    if chosen not in EXPORTERS:
        raise UsageError(
            f"{variable} is set to {chosen!r}, which plugman mcp serve does not export to",
            hint="use otlp (to OTEL_EXPORTER_OTLP_ENDPOINT, over HTTP) or none",
        )
    return chosen == "otlp"


def _tracer(resource: Any) -> Any:
    try:
        # lazy: the OpenTelemetry SDK and exporter (fleet extra), only with --otel
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise _missing(exc) from None
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)  # Telemetry.shutdown
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def _meter(resource: Any) -> Any:
    try:
        # lazy: the OpenTelemetry SDK and exporter (fleet extra), only with --otel
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    except ImportError as exc:
        raise _missing(exc) from None
    reader = PeriodicExportingMetricReader(OTLPMetricExporter())
    return MeterProvider(resource=resource, metric_readers=[reader], shutdown_on_exit=False)


def _missing(exc: ImportError) -> UsageError:
    return UsageError(
        f"--otel needs the OpenTelemetry SDK and its OTLP exporter ({exc.name or exc} is missing)",
        hint="pip install 'plugman[fleet]'",
    )


def current_trace() -> str | None:
    """The trace id of the span being served (32 hex digits), if there is a valid one."""
    from opentelemetry import trace  # the API: the mcp SDK already imports it

    context = trace.get_current_span().get_span_context()
    return f"{context.trace_id:032x}" if context.is_valid else None


def mark(server: str, outcome: str) -> None:
    """Add the backend and the outcome to the span being served (a tool call's)."""
    from opentelemetry import trace  # the API: the mcp SDK already imports it

    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes({"plugman.server": server, "plugman.outcome": outcome})


class HeaderContext:
    """Server middleware, before the SDK's OpenTelemetryMiddleware: a request whose `_meta` has
    no `traceparent` but whose HTTP request has the header is served in that trace."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        meta = ctx.meta
        if meta and "traceparent" in meta:
            return await call_next(ctx)
        headers = getattr(getattr(ctx, "request", None), "headers", None)
        if headers is None or "traceparent" not in headers:
            return await call_next(ctx)
        from opentelemetry import context, propagate  # the API: the mcp SDK already imports it

        carrier = {key: headers[key] for key in ("traceparent", "tracestate") if key in headers}
        token = context.attach(propagate.extract(carrier))
        try:
            return await call_next(ctx)
        finally:
            context.detach(token)

"""Prometheus metrics of one service: ``GET /metrics`` in the text exposition format.

:class:`Metrics` is one per service (held by the ``System``), with its own
``prometheus_client.CollectorRegistry`` — never the library's global default
registry, so two services in one process (tests) never share a counter.

- Request counts and latencies are recorded as they happen. Every lane
  counts its calls in ``browserd_requests_total{lane, route, method, code}``
  and ``browserd_request_duration_seconds{lane}`` (:meth:`Metrics.observe_call`):
  ``http`` (the HTTP façade, once per answered request, through
  :meth:`Metrics.observe_request`, which also keeps
  ``browserd_http_requests_total{route, method, status}`` and
  ``browserd_http_request_duration_seconds{route}``), ``ws`` (each ``/ws``
  call), ``mcp`` (each tool call on ``/mcp``; ``browserd mcp`` on stdio makes
  HTTP requests, counted as ``http``) and ``cdp`` (each command a CDP gateway
  client sends). Labels stay bounded whatever clients send: ``route`` is a
  route's name (``tabs_close``: the same on every lane; the HTTP view by
  status keeps its template, ``/tabs/<targetId>``, never the request's path),
  a path of the ops page's own, a ``/ws`` lane method (``subscribe``), an
  allowlisted CDP method, or ``other``; ``code`` is ``ok``, ``cancelled`` (the
  caller went away first) or an error code of :mod:`browserd.errors` (anything
  else counts as ``other``).
- Everything else is read when scraped, from a :class:`ServiceGauges`
  snapshot the caller builds (browser state per profile, restarts, tabs,
  handoffs, pending CDP commands, media and download bytes, UI sessions).

prometheus_client is synchronous and thread-safe (a short lock per update);
nothing here does I/O or awaits, so it is safe on the trio event loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import attrs
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .errors import BrowserdError

__all__ = ["CONTENT_TYPE", "LANES", "LATENCY_BUCKETS_S", "OTHER", "Lane", "Metrics",
           "ServiceGauges", "code_label", "known_codes"]

Lane = Literal["http", "ws", "mcp", "cdp"]
LANES: tuple[Lane, ...] = ("http", "ws", "mcp", "cdp")
#: The label value for a route or code outside the closed sets.
OTHER = "other"
_OUTCOMES = frozenset({"ok", "cancelled"})

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Request latency buckets (seconds): from a status read to a long /wait.
LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                     60.0, 120.0)


@attrs.frozen(kw_only=True)
class ServiceGauges:
    """What ``/metrics`` reads at scrape time (one profile per service for now)."""

    profile: str
    state: str
    states: tuple[str, ...]
    restarts: int
    spawns: int
    browser_uptime_s: float | None
    service_uptime_s: float
    tabs: int
    handoffs: int
    cdp_pending: int | None
    cdp_sent: int | None
    cdp_replies: int | None
    cdp_events: int | None
    media_files: int
    media_bytes: int
    downloads_in_progress: int
    downloads_completed: int
    downloads_canceled: int
    download_bytes: int
    ui_sessions: int


class _GaugeCollector(Collector):
    """Turns one :class:`ServiceGauges` into metric families (a one-shot collector)."""

    def __init__(self, gauges: ServiceGauges) -> None:
        self._g = gauges

    def collect(self) -> Iterator[Metric]:
        g = self._g
        profile = ["profile"]
        state = GaugeMetricFamily("browserd_browser_state",
                                  "1 for the browser's current supervisor state",
                                  labels=["profile", "state"])
        for name in g.states:
            state.add_metric([g.profile, name], 1.0 if name == g.state else 0.0)
        yield state
        yield _gauge("browserd_browser_up", "1 while the browser is running", profile,
                     g.profile, 1.0 if g.state == "running" else 0.0)
        yield _counter("browserd_browser_restarts", "Browser restarts after a crash", profile,
                       g.profile, g.restarts)
        yield _counter("browserd_browser_spawns", "Browser processes launched", profile,
                       g.profile, g.spawns)
        if g.browser_uptime_s is not None:
            yield _gauge("browserd_browser_uptime_seconds", "Seconds the browser has run",
                         profile, g.profile, g.browser_uptime_s)
        yield GaugeMetricFamily("browserd_service_uptime_seconds",
                                "Seconds the service has run", value=g.service_uptime_s)
        yield _gauge("browserd_tabs", "Listed tabs", profile, g.profile, g.tabs)
        yield _gauge("browserd_handoffs", "Tabs handed to a person", profile, g.profile,
                     g.handoffs)
        if g.cdp_pending is not None:
            yield _gauge("browserd_cdp_pending_commands", "CDP commands awaiting a reply",
                         profile, g.profile, g.cdp_pending)
            messages = CounterMetricFamily("browserd_cdp_messages",
                                           "CDP messages on the current connection",
                                           labels=["profile", "kind"])
            messages.add_metric([g.profile, "sent"], float(g.cdp_sent or 0))
            messages.add_metric([g.profile, "reply"], float(g.cdp_replies or 0))
            messages.add_metric([g.profile, "event"], float(g.cdp_events or 0))
            yield messages
        yield GaugeMetricFamily("browserd_media_files", "Files in the media store",
                                value=g.media_files)
        yield GaugeMetricFamily("browserd_media_bytes", "Bytes in the media store",
                                value=g.media_bytes)
        downloads = GaugeMetricFamily("browserd_downloads", "Download records by state",
                                      labels=["profile", "state"])
        for name, count in (("inProgress", g.downloads_in_progress),
                            ("completed", g.downloads_completed),
                            ("canceled", g.downloads_canceled)):
            downloads.add_metric([g.profile, name], float(count))
        yield downloads
        yield _gauge("browserd_download_bytes", "Bytes of kept and running downloads", profile,
                     g.profile, g.download_bytes)
        yield GaugeMetricFamily("browserd_ui_sessions", "Logged-in ops page sessions",
                                value=g.ui_sessions)


def _gauge(name: str, doc: str, labels: list[str], label: str, value: float) -> Metric:
    family = GaugeMetricFamily(name, doc, labels=labels)
    family.add_metric([label], float(value))
    return family


def _counter(name: str, doc: str, labels: list[str], label: str, value: float) -> Metric:
    family = CounterMetricFamily(name, doc, labels=labels)
    family.add_metric([label], float(value))
    return family


def known_codes() -> frozenset[str]:
    """Every error code of the hierarchy (the ``code`` of each BrowserdError class)."""
    found: set[str] = set()
    pending: list[type[BrowserdError]] = [BrowserdError]
    while pending:
        cls = pending.pop()
        found.add(cls.code)
        pending.extend(cls.__subclasses__())
    return frozenset(found)


_known: frozenset[str] = frozenset()


def code_label(code: str) -> str:
    """``code`` as a label value: ``ok``, ``cancelled``, a known error code, else ``other``."""
    global _known
    if code in _OUTCOMES or code in _known:
        return code
    _known = known_codes()  # a class defined since the last look (rare: once per new code)
    return code if code in _known else OTHER


class Metrics:
    """The service's request metrics and the text exposition of everything."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._requests = Counter(
            "browserd_http_requests", "HTTP requests answered, by route, method and status",
            ["route", "method", "status"], registry=self.registry)
        self._latency = Histogram(
            "browserd_http_request_duration_seconds", "Time to answer an HTTP request",
            ["route"], buckets=LATENCY_BUCKETS_S, registry=self.registry)
        self._calls = Counter(
            "browserd_requests", "Calls answered on every lane (http, ws, mcp, cdp), by "
            "route, method and outcome code", ["lane", "route", "method", "code"],
            registry=self.registry)
        self._lane_latency = Histogram(
            "browserd_request_duration_seconds", "Time to answer a call, by lane", ["lane"],
            buckets=LATENCY_BUCKETS_S, registry=self.registry)

    def observe_request(self, route: str, method: str, status: int, seconds: float, *,
                        code: str | None = None, name: str | None = None) -> None:
        """Count one answered HTTP request (``status`` 499: the client went away first;
        ``code``: ``ok`` or the error's code, by default read from ``status``); ``route``
        is its template, ``name`` the route's name the lane counter uses (default:
        ``route``)."""
        self._requests.labels(route, method, str(status)).inc()
        self._latency.labels(route).observe(max(0.0, seconds))
        if code is None:
            code = "ok" if status < 400 else "cancelled" if status == 499 else OTHER
        self.observe_call("http", name or route, method, code, seconds)

    def observe_call(self, lane: Lane, route: str, method: str, code: str,
                     seconds: float) -> None:
        """Count one call of ``lane``: ``route`` a template or lane method (never a raw
        path: the caller bounds it), ``code`` ``ok``, ``cancelled`` or an error code."""
        self._calls.labels(lane, route, method, code_label(code)).inc()
        self._lane_latency.labels(lane).observe(max(0.0, seconds))

    def exposition(self, gauges: ServiceGauges) -> bytes:
        """The text format: the request metrics, then ``gauges`` read now."""
        snapshot = CollectorRegistry(auto_describe=False)
        snapshot.register(_GaugeCollector(gauges))
        return generate_latest(self.registry) + generate_latest(snapshot)

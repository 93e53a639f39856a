"""The ops page's audit tail keeps health checks apart, so /healthz polling never hides the rest."""

from __future__ import annotations

import logging

from browserd.ui.audit import HEALTH_CHECK, AuditTail


def _line(method: str, path: str) -> str:
    return (f"who=- profile=- session=- {method} {path} tab=- url=- outcome=ok ms=0.1")


def test_health_checks_never_push_other_lines_out() -> None:
    tail = AuditTail(capacity=3, health_capacity=2)
    log = logging.getLogger("test.audit.tail")
    log.propagate = False
    log.setLevel(logging.INFO)
    log.addHandler(tail)
    try:
        log.info(_line("GET", "/healthz"))  # older than every other line kept: dropped
        for n in range(3):
            log.info(_line("POST", f"/click{n}"))
            for _ in range(50):
                log.info(_line("GET", "/healthz"))
        log.info(_line("GET", "/tabs"))
    finally:
        log.removeHandler(tail)
    lines = tail.lines(3)
    assert [line.split(" ", 2)[2] for line in lines] == [
        _line("POST", "/click1"), _line("POST", "/click2"), _line("GET", "/healthz"),
        _line("GET", "/healthz"), _line("GET", "/tabs")]
    assert sum(1 for line in lines if HEALTH_CHECK.match(line.split(" ", 2)[2])) == 2
    assert tail.lines(0) == []


def test_only_real_health_checks_count_as_such() -> None:
    assert HEALTH_CHECK.match(_line("GET", "/healthz"))
    assert HEALTH_CHECK.match(_line("HEAD", "/healthz"))
    assert not HEALTH_CHECK.match(_line("GET", "/healthz-not"))
    assert not HEALTH_CHECK.match(_line("POST", "/navigate").replace("tab=-", "tab=/healthz"))
    assert not HEALTH_CHECK.match("who=ui:x GET /ui/login outcome=ok ms=1.0")

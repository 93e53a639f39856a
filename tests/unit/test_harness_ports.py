"""The test harness's port range: the default below the ephemeral range, or BROWSERD_TEST_PORTS."""

from __future__ import annotations

import pytest
from supervision import harness


def test_default_range_is_below_the_ephemeral_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(harness.PORTS_ENV, raising=False)
    low, high = harness.port_range()
    assert 1024 <= low < high
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        ephemeral_low = int(f.read().split()[0])
    assert high < ephemeral_low


def test_the_range_is_taken_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(harness.PORTS_ENV, "21000-21100")
    assert harness.port_range() == (21000, 21100)
    for _ in range(5):
        port = harness.free_port_pair()
        assert port >= 21000 and port + 1 <= 21100


@pytest.mark.parametrize("bad", ["21000", "x-y", "21000-20000", "80-90", "60000-70000"])
def test_a_malformed_range_is_refused(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv(harness.PORTS_ENV, bad)
    with pytest.raises(ValueError, match=harness.PORTS_ENV):
        harness.port_range()

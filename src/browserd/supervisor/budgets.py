"""How long stopping may take: one source for every stop budget.

Derived bottom-up, so the numbers cannot drift apart:

- the browser's stop ladder (``browserd.browser.process``): Browser.close,
  SIGTERM, SIGKILL, each with its wait: :data:`BROWSER_STOP_S` (8 s);
- the supervisor's stop (the ladder plus closing the CDP connection and the
  tab actors around it): :data:`SUPERVISOR_STOP_S`;
- the service's stop on SIGTERM (the supervisor's, then draining HTTP):
  :data:`SERVICE_STOP_S` (15 s), which the service managers' timeouts
  (launchd ``ExitTimeOut``, systemd ``TimeoutStopSec``, 30 s) sit above.
"""

from __future__ import annotations

from ..browser.process import STOP_BUDGET_S as _LADDER_S

__all__ = ["BROWSER_STOP_S", "HTTP_DRAIN_S", "SERVICE_STOP_S", "SUPERVISOR_STOP_S"]

BROWSER_STOP_S: float = _LADDER_S
"""The browser process's stop ladder, at most."""
SUPERVISOR_STOP_S: float = BROWSER_STOP_S + 3.0
"""``BrowserSupervisor.stop`` on shutdown: the ladder plus the subtree's teardown."""
HTTP_DRAIN_S: float = 3.0
"""How long hypercorn may finish requests in flight after the browser stopped."""
SERVICE_STOP_S: float = SUPERVISOR_STOP_S + HTTP_DRAIN_S + 1.0
"""The whole graceful stop of ``browserd serve`` on SIGTERM (browser, then HTTP)."""

"""browserd's CDP gateway: token-guarded DevTools endpoints on the CDP port.

The launched browser has no TCP DevTools port of its own (CDP runs over its
pipe); programs that speak CDP (Playwright's ``connect_over_cdp``,
Puppeteer's ``connect``) reach it here instead, each with sessions of its
own on browserd's connection. :mod:`.app` serves the routes, :mod:`.client`
forwards one client's messages, judged by :mod:`.allowlist` and :mod:`.rules`
and scoped to its targets by :mod:`.targets`; :mod:`.confine` is browserd's
own work around them (downloads, first navigations).
"""

from .app import GatewayApp, check_gateway_port, serve_gateway
from .client import GatewayClient

__all__ = ["GatewayApp", "GatewayClient", "check_gateway_port", "serve_gateway"]

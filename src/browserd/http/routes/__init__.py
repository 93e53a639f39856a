"""The route table, by concern: service, profiles (and sessions), tabs (and the
consent scope's offer and release), page (incl.
inspection), navigation (history, scroll), input, media, state (cookies, web storage,
storage state), emulation, downloads, network, ops (handoff, metrics, the ops page's
login codes; the page's own routes are in :mod:`.ui`), tokens, secrets,
confirmations, records and meta (``/openapi.json``).

Each module exports one ``*_routes()`` function; :func:`all_routes` is the
whole table, in the order ``/openapi.json`` lists it. Every route declares
every fact about itself where it is declared (:mod:`browserd.http.facts`);
:func:`all_routes` refuses a table where one lacks any. No route module
imports another (shared fields are in :mod:`browserd.http.fields`, the tab
work pattern in :mod:`browserd.http.tabwork`).
"""

from __future__ import annotations

from ..declared import check_table
from ..schema import Route
from .confirmations import confirmation_routes
from .consent import consent_routes
from .downloads import download_routes
from .emulation import emulation_routes
from .input import input_routes
from .media import media_routes
from .meta import meta_routes
from .navigation import navigation_routes
from .network import network_routes
from .ops import ops_routes
from .page import page_routes
from .profiles import profile_routes
from .records import record_routes
from .secrets import secret_routes
from .service import service_routes
from .state import state_routes
from .tabs import tab_routes
from .tokens import token_routes

__all__ = [
    "all_routes", "confirmation_routes", "consent_routes", "download_routes", "emulation_routes",
    "input_routes", "media_routes", "meta_routes", "navigation_routes", "network_routes",
    "ops_routes", "page_routes", "profile_routes", "record_routes", "secret_routes",
    "service_routes", "state_routes", "tab_routes", "token_routes"
]

def all_routes() -> list[Route]:
    """Every route of the API (a new list each call); ValueError when one lacks a fact."""
    routes = [
        *service_routes(), *profile_routes(), *tab_routes(), *consent_routes(), *page_routes(),
        *navigation_routes(), *input_routes(), *media_routes(), *state_routes(),
        *emulation_routes(), *download_routes(), *network_routes(), *ops_routes(),
        *token_routes(), *secret_routes(), *confirmation_routes(),
        *record_routes(all_routes), *meta_routes(all_routes)]
    check_table(routes)
    return routes

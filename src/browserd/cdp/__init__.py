"""The CDP client: protocol bookkeeping and the websocket connection actor."""

from .connection import CdpConnection, CdpSession, open_cdp_connection
from .protocol import CdpEvent, JsonDict, Sink, Subscription

__all__ = ["CdpConnection", "CdpEvent", "CdpSession", "JsonDict", "Sink", "Subscription",
           "open_cdp_connection"]

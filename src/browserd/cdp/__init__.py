"""The CDP client: protocol bookkeeping, transports (pipe, websocket) and the connection actor."""

from .connection import CdpConnection, CdpSession, open_cdp_connection, open_cdp_over
from .protocol import CdpEvent, JsonDict, Sink, Subscription
from .transport import PipeTransport, Transport, WebSocketTransport

__all__ = ["CdpConnection", "CdpEvent", "CdpSession", "JsonDict", "PipeTransport", "Sink",
           "Subscription", "Transport", "WebSocketTransport", "open_cdp_connection",
           "open_cdp_over"]

"""The answer shapes of the service's own routes: status, profiles, sessions, tokens,
secrets, confirmations, cookies / storage / state and the ops page's login codes.

Like :mod:`browserd.http.answers_page`: components of ``/openapi.json``,
by name, in :data:`SERVICE_SCHEMAS`; routes name them as their answers
(:func:`browserd.http.answers.returns`).
"""

from __future__ import annotations

from typing import Any

from .answers_json import ANY, BOOL, INT, NUM, STR, STRS, arr, enum, maybe, obj, ref

__all__ = ["SERVICE_SCHEMAS"]

_COUNTS = obj({}, values=INT)

_SERVICE: dict[str, Any] = {
    "Health": obj({"ok": BOOL, "browser": enum("open", "closed", "disabled", "unresponsive"),
                   "proof?": STR}),
    "Status": obj({
        "enabled": BOOL, "state": STR, "running": BOOL, "cdpReady": BOOL, "pid": maybe(INT),
        "version": maybe(STR), "chosenBrowser": maybe(STR), "executablePath": maybe(STR),
        "userDataDir": maybe(STR), "profile": STR, "color": maybe(STR),
        "headless": maybe(BOOL), "attachOnly": BOOL, "controlUrl": STR, "cdpUrl": maybe(STR),
        "ports": obj({"control": INT, "cdp": maybe(INT)}), "restarts": INT, "spawns": INT,
        "lastError": maybe(ref("Error")), "lastCrash?": maybe(obj({})),
        "uptimeS": maybe(NUM), "serviceUptimeS": NUM, "tabs": INT, "spareTab": BOOL,
        "cdpGateway": BOOL, "cdp": maybe(_COUNTS), "media": _COUNTS,
        "downloads": obj({"enabled": BOOL, "directory": STR, "inProgress": INT,
                          "completed": INT, "canceled": INT, "pruned": INT}),
        "default": BOOL, "sessions": INT,
        "profiles": obj({}, values=obj({"state": STR, "running": BOOL})),
        "events": obj({"published": INT, "lastId": maybe(INT), "oldestId": maybe(INT),
                       "subscribers": INT, "dropped": INT}),
    }, description="one profile's browser and the service"),
    "Stopped": obj({"ok": BOOL, "stopped": BOOL}),
    "UiCode": obj({"url": STR, "code": STR, "expiresInS": NUM}),
    "ApiDocument": obj({"openapi": STR, "info": obj({"title": STR, "version": STR}),
                        "paths": obj({}), "components": obj({})},
                       description="this OpenAPI 3.1 document (each operation with its "
                                   "x-browserd-* facts)"),
}

_PROFILES: dict[str, Any] = {
    "Profile": obj({"name": STR, "driver": STR, "color": maybe(STR), "state": STR,
                    "running": BOOL, "tabs": INT, "sessions": INT, "default": BOOL,
                    "origin": enum("default", "config", "api"), "pid?": INT, "cdpPort?": INT,
                    "userDataDir?": STR, "cdpUrl?": STR, "liveFallback?": STR,
                    "gatewayError?": ANY}),
    "ProfileList": obj({"profiles": arr(ref("Profile"))}),
    "ProfileDeleted": obj({"ok": BOOL, "name": STR, "dataRemoved": BOOL,
                           "downloadsRemoved": INT, "dataKept?": STR, "userDataDir?": STR}),
    "Session": obj({"sessionId": STR, "name": maybe(STR), "ttlS": NUM, "profile?": STR,
                    "createdAt?": NUM, "idleS?": NUM, "tabs?": INT, "allowedOrigins?": STRS}),
    "SessionList": obj({"profile": STR, "sessions": arr(ref("Session"))}),
    "SessionDeleted": obj({"ok": BOOL, "sessionId": STR}),
}

_TOKEN = {"name": STR, "scopes": STRS, "profiles": maybe(STRS), "sessions": maybe(STRS),
          "parent": maybe(STR), "expiresAt": maybe(NUM)}
_HELD = {"id": STR, "kind": STR, "summary": STR, "target": obj({}), "token": STR,
         "profile?": STR, "state": enum("pending", "approved", "denied", "ran"),
         "createdAt?": NUM, "answeredAt?": maybe(NUM)}

_PRINCIPALS: dict[str, Any] = {
    "Token": obj({**_TOKEN, "createdAt": NUM, "lastUsedAt": maybe(NUM),
                  "revokedAt": maybe(NUM)}),
    "TokenList": obj({"you": obj({**_TOKEN, "kind": enum("person", "agent")}),
                      "tokens": arr(ref("Token"))}),
    "MintedToken": obj({**_TOKEN, "createdAt": NUM, "lastUsedAt": maybe(NUM),
                        "revokedAt": maybe(NUM),
                        "token": {**STR, "description": "the secret, shown once"}}),
    "TokenRevoked": obj({"ok": BOOL, "name": STR, "revoked": STRS}),
    "Secret": obj({"name": STR, "origin": maybe(STR), "hasUsername": BOOL, "createdAt": NUM},
                  description="a vault entry (never its value)"),
    "SecretList": obj({"secrets": arr(ref("Secret"))}),
    "Deleted": obj({"ok": BOOL, "name": STR}),
    "Confirmation": obj(_HELD, description="an agent action held for the person"),
    "ConfirmationList": obj({"rules": arr(obj({"kind?": STR, "origin?": STR, "name?": STR})),
                             "confirmations": arr(ref("Confirmation"))}),
}

_STATE: dict[str, Any] = {
    "Cookie": obj({"name": STR, "value": STR, "domain": STR, "path": STR, "expires": NUM,
                   "httpOnly": BOOL, "secure": BOOL, "sameSite": STR, "partitionKey?": ANY}),
    "CookieList": obj({"cookies": arr(ref("Cookie"))}),
    "CookiesSet": obj({"ok": BOOL, "set": INT,
                       "notSet": arr(obj({"index": INT, "name": STR, "domain?": maybe(STR)})),
                       "expired": INT}),
    "CookiesDeleted": obj({"ok": BOOL, "deleted": INT}),
    "StorageItems": obj({"kind": enum("local", "session"), "origin": STR,
                         "items": obj({}, values=STR)}),
    "StorageSet": obj({"ok": BOOL, "kind": enum("local", "session"), "origin": STR,
                       "set": INT}),
    "StorageRemoved": obj({"ok": BOOL, "kind": enum("local", "session"), "origin": STR,
                           "removed": INT}),
    "StorageState": obj({
        "cookies": arr(ref("Cookie")),
        "origins": arr(obj({"origin": STR,
                            "localStorage": arr(obj({"name": STR, "value": STR}))})),
    }, description="Playwright's storageState"),
    "StateImported": obj({"ok": BOOL, "cookies": INT, "cookiesNotSet": arr(ANY),
                          "cookiesExpired": INT, "cookiesPartitioned": INT, "origins": INT,
                          "items": INT}),
}

#: Every service-side answer component, by name.
SERVICE_SCHEMAS: dict[str, Any] = {**_SERVICE, **_PROFILES, **_PRINCIPALS, **_STATE}

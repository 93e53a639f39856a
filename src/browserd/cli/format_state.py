"""Human text of the CLI's profile, session, cookie, storage and emulation answers.

:func:`format_state` renders those answers (``profiles``, ``sessions``,
``cookies``, ``storage``, ``emulate``: their lists and their create / set /
delete answers) or returns None for any other answer; :func:`format_fields`
is the rendering of last resort for an answer no formatter knows: ``key:
value`` lines, nested records indented, never JSON. Cookie values and
storage items are the pages' data: the caller puts them between page
boundary lines. Pure functions of decoded answers; never raise on odd shapes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["format_fields", "format_state"]


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def format_fields(value: Any, indent: str = "") -> str:
    """``value`` as ``key: value`` lines (lists one item a line); the ``untrusted``
    marker of JSON answers is left out (the CLI marks page text with boundaries)."""
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if key == "untrusted":
                continue
            nested = (isinstance(item, dict) and item) or (
                isinstance(item, list) and any(isinstance(i, dict | list) for i in item))
            if nested:
                lines += [f"{indent}{key}:", format_fields(item, indent + "  ")]
            elif isinstance(item, list):
                lines.append(f"{indent}{key}: " + (", ".join(map(_scalar, item)) or "-"))
            else:
                lines.append(f"{indent}{key}: {_scalar(item)}")
        return "\n".join(lines) or f"{indent}ok"
    if isinstance(value, list):
        lines = []
        for item in value:
            if isinstance(item, dict):
                lines.append(f"{indent}- " + "  ".join(
                    f"{k}={_scalar(v)}" for k, v in item.items()
                    if not isinstance(v, dict | list)))
            else:
                lines.append(f"{indent}- {_scalar(item)}")
        return "\n".join(lines) or f"{indent}(none)"
    return indent + _scalar(value)


def _profile_line(p: dict[str, Any]) -> str:
    return (f"{'*' if p.get('default') else ' '} {p.get('name')}  {p.get('driver')}  "
            f"{p.get('state')}  {p.get('color')}  tabs {p.get('tabs', 0)}  "
            f"sessions {p.get('sessions', 0)}")


def _session_line(s: dict[str, Any]) -> str:
    line = f"{s.get('sessionId')}  {str(s.get('name') or '')!r}  ttl {_scalar(s.get('ttlS'))}s"
    if "tabs" in s:
        line += f"  tabs {s['tabs']}  idle {_scalar(s.get('idleS'))}s"
    return line


def _cookie_line(c: dict[str, Any]) -> str:
    flags = [flag for flag, on in (("secure", c.get("secure")), ("httpOnly", c.get("httpOnly")))
             if on]
    if c.get("sameSite"):
        flags.append(f"SameSite={c['sameSite']}")
    expires = c.get("expires")
    when = "session" if not isinstance(expires, int | float) or expires < 0 else f"{expires:.0f}"
    return (f"{c.get('name')}={c.get('value')}  {c.get('domain')}{c.get('path') or ''}  "
            f"[{' '.join(flags)}]  expires {when}")


def _emulation_line(e: dict[str, Any]) -> str:
    parts = []
    for key, value in e.items():
        if value in (None, False) or (key == "cpuThrottling" and value == 1):
            continue
        if key == "viewport" and isinstance(value, dict):
            value = f"{value.get('width')}x{value.get('height')}" + (
                " mobile" if value.get("mobile") else "")
        elif isinstance(value, dict):
            value = ",".join(_scalar(v) for v in value.values())
        parts.append(f"{key}={_scalar(value)}")
    return "  ".join(parts) or "no emulation"


def _format_profiles(r: dict[str, Any]) -> str | None:
    if isinstance(r.get("profiles"), list):
        return "\n".join(_profile_line(p) for p in r["profiles"] if isinstance(p, dict)) \
            or "no profiles"
    if "dataRemoved" in r and "name" in r:
        return f"deleted profile {r['name']}" + (
            " and its data" if r["dataRemoved"] else " (its data kept)")
    if {"name", "driver", "state", "color"} <= set(r):
        return _profile_line(r)
    if isinstance(r.get("sessions"), list) and "profile" in r:
        return "\n".join(_session_line(s) for s in r["sessions"] if isinstance(s, dict)) \
            or f"no sessions of profile {r['profile']}"
    if "sessionId" in r and "ttlS" in r:
        return _session_line(r)
    return None


def _format_cookies_and_storage(r: dict[str, Any]) -> str | None:
    if isinstance(r.get("cookies"), list) and "origins" not in r:
        return "\n".join(_cookie_line(c) for c in r["cookies"] if isinstance(c, dict)) \
            or "no cookies"
    if "set" in r and "notSet" in r:
        not_set = r.get("notSet") or []
        return f"set {r['set']} cookie(s)" + (f"; not set: {len(not_set)}" if not_set else "")
    if "deleted" in r and set(r) <= {"ok", "deleted"}:
        return f"deleted {r['deleted']} cookie(s)"
    if "kind" in r and "origin" in r:
        where = f"{r['kind']}Storage of {r['origin']}"
        if isinstance(r.get("items"), dict):
            return "\n".join(f"{k}={v}" for k, v in r["items"].items()) or f"{where}: empty"
        if "set" in r:
            return f"set {r['set']} item(s) in {where}"
        if "removed" in r:
            return f"removed {r['removed']} item(s) from {where}"
    if isinstance(r.get("emulation"), dict):
        return f"{r.get('targetId')}  {_emulation_line(r['emulation'])}"
    return None


def format_state(r: dict[str, Any]) -> str | None:
    """The human text of a profile, session, cookie, storage or emulation answer,
    or None when ``r`` is not one."""
    return _format_profiles(r) or _format_cookies_and_storage(r)

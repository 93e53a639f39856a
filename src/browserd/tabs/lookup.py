"""Tab ids as clients write them: an exact id, or a unique case-insensitive prefix.

Plain code: :class:`~browserd.tabs.registry.TabRegistry` applies it to the
tabs of the caller's scope, so a prefix never matches another scope's tab.
"""

from __future__ import annotations

from collections.abc import Collection

from ..errors import AmbiguousTarget, BadRequest, TabNotFound

__all__ = ["MIN_PREFIX", "match_target_id"]

MIN_PREFIX = 4


def match_target_id(target_id: object, known: Collection[str]) -> str:
    """The id of ``known`` that ``target_id`` names: itself, or the one id it prefixes.

    Raises BadRequest when ``target_id`` is not a non-empty string,
    TabNotFound when nothing matches (or a prefix is shorter than
    :data:`MIN_PREFIX`), AmbiguousTarget (listing the matches) when several do.
    """
    if not isinstance(target_id, str) or not target_id:
        raise BadRequest("targetId must be a non-empty string")
    if target_id in known:
        return target_id
    needle = target_id.lower()
    if len(needle) < MIN_PREFIX:
        raise TabNotFound(
            f"no tab {target_id!r}",
            hint=f"use the full targetId or a unique prefix of at least {MIN_PREFIX} "
            "characters",
        )
    hits = [t for t in known if t.lower().startswith(needle)]
    if not hits:
        raise TabNotFound(f"no tab {target_id!r}")
    if len(hits) > 1:
        raise AmbiguousTarget(f"{target_id!r} matches {len(hits)} tabs", matches=hits)
    return hits[0]

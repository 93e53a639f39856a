"""Exception groups collapsed to the one error that matters (re-exported by :mod:`.errors`)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["collapse_group"]


def collapse_group(exc: BaseException, *, domain: type[Exception],
                   rank: Callable[[Exception], int] | None = None) -> BaseException:
    """Collapse an exception group to the one error that matters.

    The policy, used at every actor boundary: a group holding a single
    exception (possibly nested) is that exception; otherwise the first
    :class:`BrowserdError` inside wins; otherwise the group is returned as is.
    Cancellation is never swallowed: callers re-raise what this returns.
    """
    while isinstance(exc, BaseExceptionGroup):
        if len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
            continue
        leaves = _leaves(exc)
        if any(not isinstance(e, Exception) for e in leaves):
            return exc  # Cancelled / KeyboardInterrupt inside: never swallowed
        ours = [e for e in leaves if isinstance(e, domain)]
        if not ours:
            return exc
        return min(ours, key=rank) if rank is not None else ours[0]
    return exc


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for e in group.exceptions:
        if isinstance(e, BaseExceptionGroup):
            out.extend(_leaves(e))
        else:
            out.append(e)
    return out

"""Bounded-time matching of page-controlled text (URL globs).

A page controls its own URL (``history.pushState`` can make it megabytes
long), so nothing that matches it may backtrack: a regex such as
``^.*/x/.*/y/.*$`` took seconds on a 4 KB URL and froze the event loop.

:func:`glob_match` simulates the glob as a set of states instead. The set of
text positions the pattern prefix can reach is kept as one big integer, one
byte per position (``0x01`` = reachable), and every pattern token transforms
the whole set with a few shifts and ANDs that run in C:

- a literal run ``L``: positions ``p`` where ``text[p:p+len(L)] == L``,
  moved on by ``len(L)``;
- ``*`` (any run without ``/``): every reachable position spreads right until
  the next ``/``, by doubling (``log2(len(text))`` steps);
- ``**`` (any run): every position at or after the first reachable one.

The cost is ``O(len(pattern) * len(text) * log(len(text)) / 64)`` machine
words in the worst case and never depends on how the pattern could
backtrack. Glob syntax (kept from the first contract): ``*`` matches a run of
characters without ``/``, ``**`` any run, every other character (``?``
included: URLs use it) matches itself; the glob must match the whole text.
"""

from __future__ import annotations

import re

import attrs

_GLOBSTAR = "**"
_STAR = "*"


@attrs.frozen(kw_only=True)
class Glob:
    """A parsed glob: each token is ``"**"``, ``"*"`` or None (the next literal run).

    ``literals`` holds the literal runs (never empty, never with a ``*``) in
    the order their None tokens appear.
    """

    pattern: str
    tokens: tuple[str | None, ...]
    literals: tuple[str, ...]

    def match(self, text: str) -> bool:
        """True when the glob matches the whole of ``text`` (bounded time)."""
        return _Matcher(text).run(self)


def compile_glob(pattern: str) -> Glob:
    """Parse ``pattern`` into tokens; a run of two or more stars is ``**``."""
    tokens: list[str | None] = []  # None = a literal, taken from literals in order
    literals: list[str] = []
    i, n = 0, len(pattern)
    literal: list[str] = []
    while i < n:
        if pattern[i] != "*":
            literal.append(pattern[i])
            i += 1
            continue
        if literal:
            tokens.append(None)
            literals.append("".join(literal))
            literal = []
        run = 0
        while i < n and pattern[i] == "*":
            run += 1
            i += 1
        # A whole run of stars is read at once, so two star tokens never touch.
        tokens.append(_GLOBSTAR if run >= 2 else _STAR)
    if literal:
        tokens.append(None)
        literals.append("".join(literal))
    return Glob(pattern=pattern, tokens=tuple(tokens), literals=tuple(literals))


def glob_match(pattern: str, text: str) -> bool:
    """Does the URL glob ``pattern`` match the whole of ``text``? (bounded time)"""
    return compile_glob(pattern).match(text)


_UNIT = 8  # bits per text position in the state integers


class _Matcher:
    """Per-text masks for one match: position masks of characters, slash-free spans."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self._ascii = text.encode("ascii") if text.isascii() else None
        self._char_masks: dict[str, int] = {}
        self._spans: list[int] | None = None
        self._every: int | None = None

    # A position set: bit 8*p is set when position p (0..n) is reachable.

    def run(self, glob: Glob) -> bool:
        state = 1  # position 0
        literals = iter(glob.literals)
        for token in glob.tokens:
            if token is None:
                literal = next(literals)
                state = (state & self._occurrences(literal)) << (_UNIT * len(literal))
            elif token == _GLOBSTAR:
                lowest = state & -state
                state = self._all() & ~(lowest - 1)
            else:
                state = self._spread_without_slash(state)
            if not state:
                return False
        return bool((state >> (_UNIT * self.n)) & 1)

    def _all(self) -> int:
        if self._every is None:
            self._every = int.from_bytes(b"\x01" * (self.n + 1), "little")
        return self._every

    def _char_mask(self, char: str) -> int:
        """Positions p < n with text[p] == char."""
        mask = self._char_masks.get(char)
        if mask is not None:
            return mask
        if self._ascii is not None:
            if char.isascii():
                table = bytearray(256)
                table[ord(char)] = 1
                mask = int.from_bytes(self._ascii.translate(bytes(table)), "little")
            else:
                mask = 0
        else:
            units = bytearray(self.n)
            for found in re.finditer(re.escape(char), self.text):
                units[found.start()] = 1
            mask = int.from_bytes(units, "little")
        self._char_masks[char] = mask
        return mask

    def _occurrences(self, literal: str) -> int:
        """Start positions p where text[p:p+len(literal)] == literal."""
        occ = -1
        for offset, char in enumerate(literal):
            occ &= self._char_mask(char) >> (_UNIT * offset)
            if not occ:
                return 0
        return occ

    def _spread_without_slash(self, state: int) -> int:
        """Every position q reachable from a p in ``state`` with no "/" in text[p:q]."""
        spans = self._slash_free_spans()
        step = 1
        for span in spans:
            state |= (state & span) << (_UNIT * step)
            step *= 2
        return state

    def _slash_free_spans(self) -> list[int]:
        """spans[k]: positions p with no "/" in text[p:p+2**k] (p + 2**k <= n)."""
        if self._spans is None:
            not_slash = int.from_bytes(b"\x01" * self.n, "little") & ~self._char_mask("/")
            spans = [not_slash]
            width = 1
            while width * 2 <= self.n:
                last = spans[-1]
                spans.append(last & (last >> (_UNIT * width)))
                width *= 2
            self._spans = spans
        return self._spans


__all__ = ["Glob", "compile_glob", "glob_match"]

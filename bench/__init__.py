"""browserd's benchmark: raw CDP vs Playwright vs browserd on the same Chromium.

Run ``python -m bench`` (``--quick``, ``--only start,tab,...``, ``--out
docs/benchmarks.md``); see :mod:`bench.__main__`. Needs the ``bench`` extra
(Playwright, httpx) and Debian's Chromium at /usr/lib/chromium/chromium.

The side-by-side bench: :mod:`bench.run` (the rounds), :mod:`bench.results`
(rows, cells, goals), :mod:`bench.report` (the Markdown), :mod:`bench.profiling`
(``--profile``), and :mod:`bench.ops` (one function per operation per side:
``ops.raw``, ``ops.pw``, ``ops.bd``). The other ``*_bench`` modules run on their own.
"""

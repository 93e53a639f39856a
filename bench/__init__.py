"""browserd's benchmark: raw CDP vs Playwright vs browserd on the same Chromium.

Run ``python -m bench`` (``--quick``, ``--only start,tab,...``, ``--out
docs/benchmarks.md``); see :mod:`bench.__main__`. Needs the ``bench`` extra
(Playwright, httpx) and Debian's Chromium at /usr/lib/chromium/chromium.
"""

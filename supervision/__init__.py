"""Fault drills for browserd: each starts browserd on a real Chromium, injects one fault
(F1-F18) and checks recovery and the invariants.

Run them with ``python -m supervision [--only F1,F3] [--fast]``; the fast subset also
runs in CI through tests/integration/test_drills.py.
"""

from .drill import DrillResult
from .drills import DRILLS, FAST, run_drill

__all__ = ["DRILLS", "FAST", "DrillResult", "run_drill"]

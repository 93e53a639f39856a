"""What the restart-loop tests share (test_supervisor.py, test_supervisor_states.py).

:func:`make` builds a BrowserSupervisor whose browser is the ``subtree`` a test
passes (a coroutine standing in for a launch); :data:`VIRTUAL_DEADLINE_S` bounds
each test in trio's virtual seconds.
"""

from __future__ import annotations

from pathlib import Path

from browserd.config import Settings
from browserd.paths import Paths
from browserd.supervisor import BrowserSupervisor

__all__ = ["VIRTUAL_DEADLINE_S", "make"]


#: Deadline of each test in trio's (virtual, autojumping) seconds: a policy
#: regression that loops forever (e.g. a restart budget that never runs out)
#: fails the test instead of spinning.
VIRTUAL_DEADLINE_S = 3600.0


def make(tmp_path: Path, subtree, rng=lambda: 0.5, **settings) -> BrowserSupervisor:  # type: ignore[no-untyped-def]
    paths = Paths.resolve({"BROWSERD_HOME": str(tmp_path)})
    return BrowserSupervisor(Settings(**settings), paths, rng=rng, subtree=subtree)

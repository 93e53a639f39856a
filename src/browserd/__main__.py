"""``python -m browserd`` is the ``browserd`` command."""

import sys

from .cli import main

sys.exit(main())

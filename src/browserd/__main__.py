"""``python -m browserd`` is the ``browserd`` command."""

import sys

from .cli.main import main

sys.exit(main())

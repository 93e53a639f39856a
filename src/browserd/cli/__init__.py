"""The ``browserd`` command line.

:mod:`.main` is the entry point (``browserd = browserd.cli.main:main``): it
parses the global flags, the commands written by hand and the ones
generated from the route table (:mod:`.routes`), and runs one. The rest of
the package is one module per group of commands (:mod:`.state`,
:mod:`.input`, :mod:`.network`, :mod:`.profiles`, :mod:`.offer`,
:mod:`.tokens`, :mod:`.secrets`, :mod:`.confirm`, :mod:`.record`,
:mod:`.ui`, :mod:`.extension`), how answers are printed (:mod:`.format`,
:mod:`.format_state`), how a command's words become fields (:mod:`.args`),
help and hints in CLI terms (:mod:`.help`, :mod:`.hints`).

This ``__init__`` imports nothing: importing any command module stays as
cheap as that module (``browserd --help`` and every command run start here).
"""

__all__: list[str] = []

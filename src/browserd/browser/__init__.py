"""Leaves that deal with one Chromium process: executable, profile, ports, launch, DevTools HTTP."""

__all__: list[str] = []  # a namespace: import the modules themselves

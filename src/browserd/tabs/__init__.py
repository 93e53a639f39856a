"""Tabs: the registry, one actor per tab and its typed state, and the page work on a tab."""

__all__: list[str] = []  # a namespace: import the modules themselves

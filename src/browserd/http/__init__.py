"""The HTTP façade: app, guard, schema, shared fields, tab work and the route table."""

__all__: list[str] = []  # a namespace: import the modules themselves

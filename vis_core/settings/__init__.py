"""Settings: the shared tree, scoped values (global → project → group → session → command line),
secrets, ``on_change`` and the values ``Setting.value()`` reads (through the host's runtime).

Each name is imported from the module that defines it (``settings.service``, ``settings.tree``, …).
"""

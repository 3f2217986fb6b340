"""The exit statuses every ``vis`` command shares (``vis run`` adds those of its own stops)."""

EXIT_OK = 0
EXIT_FAILED = 1  # it ran and failed: a turn, a server, a check
EXIT_USAGE = 2  # nothing ran: the command line, a setting or the store refused it
EXIT_INTERRUPTED = 130  # Ctrl+C (128 + SIGINT), as a shell says it

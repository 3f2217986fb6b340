"""One IPC layer: typed messages, framing, the child-process supervisor, the value codec."""

"""The host side of extensions: discovery, loading, workers, load errors and SDK services."""

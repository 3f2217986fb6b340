"""What the next request carries: folds (``fold_session`` keys), utilization and hints, overflow
recovery, ``/compact`` and ``/context``."""

"""Columnar `Qrels` and `Run` and the array helpers beneath them. Internal: the public API is
what `skillret/__init__.py` exports."""

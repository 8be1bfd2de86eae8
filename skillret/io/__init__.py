"""Readers (`readers.open_run`, `readers.read_qrels`) and atomic writers. Internal: the public
API is what `skillret/__init__.py` exports."""

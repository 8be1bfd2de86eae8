"""Every reader and writer: runs, qrels, facets and per-query tables in every format
(`readers` is the door: `read_qrels`, `open_run`), and the outputs written whole or not at
all (`atomic`, `write_*`). Internal; the public API is what `skillret/__init__.py` exports.
"""

"""Columnar forms of the inputs: `Qrels` and `Run` as Arrow/numpy columns, and the array
helpers beneath them (Arrow <-> numpy over buffers, string ids as bytes, in-memory objects to
columns). Everything here is internal; the public API is what `skillret/__init__.py` exports.
"""

"""The sha256 of a file, read in blocks: what contracts and the stage settings record of an
input, so that a number can be traced to the exact bytes it came from."""

from __future__ import annotations

import os


def sha256(path: str | os.PathLike) -> str:
    """The file's sha256, as hex."""
    import hashlib  # only contracts need it: kept off the start-up of every command
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

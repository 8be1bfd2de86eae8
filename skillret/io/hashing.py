"""The sha256 of a file (what contracts and stage settings record of an input), and of a folder
of code (every file's path and bytes, byte-compiled files and `*.egg-info` left out)."""

from __future__ import annotations

import os
from pathlib import Path


def sha256(path: str | os.PathLike) -> str:
    """The file's sha256, as hex."""
    import hashlib  # OpenSSL's libcrypto: off the start-up of `score`, whose pipeline imports this

    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def tree_sha256(folder: str | os.PathLike) -> str:
    """The sha256 of every file under `folder` (its relative path, then its sha256, in sorted
    path order): it changes exactly when a file is added, removed, renamed or edited."""
    import hashlib  # as in sha256

    root = Path(folder)
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in (".pyc", ".pyo")
                   and not any(part == "__pycache__" or part.endswith(".egg-info")
                               for part in p.relative_to(root).parts))
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(sha256(path).encode() + b"\n")
    return digest.hexdigest()

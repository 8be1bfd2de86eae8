"""sha256 of a file, and of a folder of code."""

from __future__ import annotations

import os
from pathlib import Path


def sha256(path: str | os.PathLike) -> str:
    """The file's sha256, as hex."""
    import hashlib  # loads libcrypto: kept off `score`'s start-up

    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def tree_sha256(folder: str | os.PathLike) -> str:
    """Changes exactly when a file is added, removed, renamed or edited (bytecode and
    `*.egg-info` ignored)."""
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

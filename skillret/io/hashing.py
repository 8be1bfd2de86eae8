"""The sha256 of a file, read in blocks: what contracts and the stage settings record of an
input, so that a number can be traced to the exact bytes it came from; and of a folder of code
(every file's path and bytes), what the stage settings record of the code that scores."""

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


#: not part of the code: byte-compiled files (as .dvcignore says), packaging metadata
SKIPPED_DIRS = ("__pycache__",)
SKIPPED_SUFFIXES = (".pyc", ".pyo")


def tree_sha256(folder: str | os.PathLike) -> str:
    """The sha256 of every file under ``folder`` (its path relative to ``folder``, then its
    bytes' sha256, in sorted path order), byte-compiled files and ``*.egg-info`` left out: it
    changes exactly when a file is added, removed, renamed or edited."""
    import hashlib
    from pathlib import Path

    root = Path(folder)
    files = sorted(p for p in root.rglob("*") if p.is_file()
                   and not any(part in SKIPPED_DIRS or part.endswith(".egg-info")
                               for part in p.relative_to(root).parts)
                   and not p.name.endswith(SKIPPED_SUFFIXES))
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(sha256(path).encode() + b"\n")
    return digest.hexdigest()

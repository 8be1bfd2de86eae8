"""Outputs that appear whole and together, or not at all.

Each file is written beside its target and renamed into place; inside an `OutputSet` the
renames wait for the end of the block, so on any error nothing appears. Devices and FIFOs are
written in place. Temporary files hold an exclusive `flock` (dropped by the kernel when the
writer dies); the next writer into the directory removes those whose lock it can take, so a
live writer's file is never removed, whatever its PID namespace.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import signal
import stat
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterator

from skillret.errors import OutputError

_TEMP_NAME = re.compile(r"^\..*\.skillret-\d+-[0-9a-f]{8}\.tmp$")
_active: ContextVar["OutputSet | None"] = ContextVar("skillret_output_set", default=None)
_swept: set[str] = set()


class _Temp:
    """A temporary file beside `target`, locked by this process while it exists."""

    def __init__(self, target: Path):
        self.target = target
        _check_target(target)
        _sweep(target.parent)
        for _ in range(100):
            name = f".{target.name[:180]}.skillret-{os.getpid()}-{os.urandom(4).hex()}.tmp"
            self.path = target.parent / name
            try:
                self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                                  0o666)
            except FileExistsError:
                continue
            except OSError as exc:
                raise OutputError(target, _reason(exc)) from None
            if _locked(self.fd, self.path):  # else swept by another process before the lock
                return
            os.close(self.fd)
        raise OutputError(target, "no temporary file could be created beside it")

    def end(self, commit: bool) -> None:
        """Rename into place (OutputError if that fails: `end(False)` then cleans up), or
        remove; then drop the lock."""
        try:
            os.replace(self.path, self.target) if commit else os.unlink(self.path)
        except OSError as exc:
            if commit:
                raise OutputError(self.target, _reason(exc)) from None
        os.close(self.fd)


class OutputSet:
    """Outputs renamed into place together when the `with` block ends without error (an inner
    set's join the outer one's). `path(target)` creates the temporary file at once, so an
    unwritable place fails early.
    """

    def __init__(self) -> None:
        self._temps: dict[Path, _Temp] = {}

    def __enter__(self) -> "OutputSet":
        self._token = _active.set(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        _active.reset(self._token)
        outer = _active.get()
        temps, self._temps = self._temps, {}
        if exc_type is not None:  # the targets keep their old content
            for temp in temps.values():
                temp.end(commit=False)
        elif outer is None:
            _commit(list(temps.values()))
        else:
            for key, temp in temps.items():
                old = outer._temps.pop(key, None)
                if old is not None:  # a target both sets write: the inner one's is kept
                    old.end(commit=False)
                outer._temps[key] = temp

    def path(self, target: str | os.PathLike) -> Path:
        """The temporary path that becomes `target` when the set is committed."""
        key = Path(os.path.abspath(target))
        if _special(key):
            return Path(target)  # written in place
        if key not in self._temps:
            self._temps[key] = _Temp(Path(target))
        return self._temps[key].path


def _commit(temps: list[_Temp]) -> None:
    """Check every target, then rename every temporary file into place; a SIGINT, SIGTERM or
    SIGHUP waits until every file is in place (or every temporary file is removed)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
    try:
        for temp in temps:
            _check_target(temp.target)
        while temps:
            temps[0].end(commit=True)
            temps.pop(0)
    finally:
        for temp in temps:
            temp.end(commit=False)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def reserve(*targets: str | os.PathLike | None) -> None:
    """OutputError unless each target (None skipped) can be written; makes missing parent
    directories but no temporary file."""
    for target in targets:
        if target is None or _special(target):
            continue
        _check_target(Path(target))
        parent = Path(target).parent
        if not os.access(parent, os.W_OK | os.X_OK):
            read_only = os.statvfs(parent).f_flag & os.ST_RDONLY
            raise OutputError(target, _REASONS[errno.EROFS if read_only else errno.EACCES])


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path that replaces `path` when the block (or the enclosing set) ends;
    removed on error. An error writing it becomes one line naming `path`."""
    with OutputSet() as out:
        tmp = out.path(path)
        try:
            yield tmp
        except OSError as exc:
            named = {exc.filename, exc.filename2} - {None}
            if named and str(tmp) not in named:
                raise  # about another file (an input read while writing)
            raise OutputError(path, _reason(exc)) from None


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def dumps_json(data: Any) -> str:
    """Stable JSON: two-space indent, keys in the order given, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(path: str | os.PathLike, data: Any) -> None:
    write_text(path, dumps_json(data))


def _special(path: str | os.PathLike) -> bool:
    """A device, FIFO or name leading through /dev or /proc: written in place, since a rename
    would replace the link itself (`-o /dev/stdout`), not write where it leads."""
    try:
        if not (stat.S_ISREG(mode := os.stat(path).st_mode) or stat.S_ISDIR(mode)):
            return True
    except OSError:
        return False
    name = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on links followed
        if name.startswith(("/dev/", "/proc/")):
            return True
        if not os.path.islink(name):
            return False
        name = os.path.join(os.path.dirname(name), os.readlink(name))
    return False


def _check_target(target: Path) -> None:
    """OutputError for a directory target or a non-directory parent; makes the parent."""
    if target.is_dir():
        raise OutputError(target, "it is a directory")
    parent = target.parent
    for ancestor in [parent, *parent.parents]:
        if ancestor.exists():
            if not ancestor.is_dir():
                raise OutputError(target, f"{ancestor} is not a directory")
            break
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(target, _reason(exc)) from None


def _locked(fd: int, path) -> bool:
    """Takes `fd`'s exclusive lock if free; True when `path` still names `fd`'s file."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
    except OSError:  # a live writer's, or gone
        return False


def _sweep(directory: Path) -> None:
    """Remove dead writers' temporary files (their lock is free), once per directory."""
    key = os.path.abspath(directory)
    if key in _swept:
        return
    _swept.add(key)
    try:
        entries = [e.path for e in os.scandir(directory) if _TEMP_NAME.match(e.name)]
    except OSError:
        return
    for path in entries:
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
            try:
                if _locked(fd, path):
                    os.unlink(path)
            finally:
                os.close(fd)


_REASONS = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
            errno.EROFS: "read-only file system", errno.EACCES: "permission denied",
            errno.EPERM: "operation not permitted", errno.EISDIR: "it is a directory",
            errno.ENOTDIR: "a parent is not a directory"}


def _reason(exc: OSError) -> str:
    code = exc.errno
    if code is None:  # pyarrow puts the errno in the message: "... [errno 28] ..."
        match = re.search(r"\[errno (\d+)\]", str(exc), re.IGNORECASE)
        code = int(match.group(1)) if match else None
    if code in _REASONS:
        return _REASONS[code]
    return exc.strerror or (str(exc).splitlines() or [type(exc).__name__])[0]

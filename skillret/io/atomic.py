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

    _fd: int | None = None

    def __init__(self, target: Path):
        self.target = target
        parent = target.parent
        _check_target(target)
        _sweep(parent)
        for _ in range(100):
            name = f".{target.name[:180]}.skillret-{os.getpid()}-{os.urandom(4).hex()}.tmp"
            path = parent / name
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            except FileExistsError:
                continue
            except OSError as exc:
                raise OutputError(target, _reason(exc)) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if os.stat(path).st_ino == os.fstat(fd).st_ino:
                    self.path, self._fd = path, fd
                    return
            except OSError:  # swept by another process between create and lock
                pass
            os.close(fd)
        raise OutputError(target, "no temporary file could be created beside it")

    def commit(self) -> None:
        try:
            os.replace(self.path, self.target)
        except OSError as exc:
            raise OutputError(self.target, _reason(exc)) from None
        self._close()

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        self._close()

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class OutputSet:
    """Outputs renamed into place together when the `with` block ends without error.

    `path(target)` creates the temporary file at once, so an unwritable place fails early.
    """

    def __init__(self) -> None:
        self._temps: dict[Path, _Temp] = {}
        self._outer: OutputSet | None = None
        self._token = None

    def __enter__(self) -> "OutputSet":
        self._outer = _active.get()
        self._token = _active.set(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        _active.reset(self._token)
        if exc_type is not None:
            self.discard()
        elif self._outer is not None:
            self._outer._adopt(self._temps)
            self._temps = {}
        else:
            self.commit()

    def path(self, target: str | os.PathLike) -> Path:
        """The temporary path that becomes `target` when the set is committed."""
        key = _absolute(target)
        if _special(key):
            return Path(target)  # written in place
        if key not in self._temps:
            self._temps[key] = _Temp(Path(target))
        return self._temps[key].path

    def drop(self, target: str | os.PathLike) -> None:
        """Forget `target`: its temporary file is removed and the old file stays."""
        temp = self._temps.pop(_absolute(target), None)
        if temp is not None:
            temp.discard()

    def write_bytes(self, target: str | os.PathLike, data: bytes) -> None:
        with _writing(target, self.path(target)) as tmp:
            tmp.write_bytes(data)

    def write_text(self, target: str | os.PathLike, text: str) -> None:
        self.write_bytes(target, text.encode("utf-8"))

    def write_json(self, target: str | os.PathLike, data: Any) -> None:
        self.write_text(target, dumps_json(data))

    def commit(self) -> None:
        """Check every target, then rename every temporary file into place."""
        temps, self._temps = list(self._temps.values()), {}
        try:
            for temp in temps:
                _check_target(temp.target)
            with _signals_held():  # a SIGTERM or ^C waits until every file is in place
                while temps:
                    temps[0].commit()
                    temps.pop(0)
        finally:
            for temp in temps:
                temp.discard()

    def discard(self) -> None:
        """Remove every temporary file; the targets keep their old content."""
        temps, self._temps = list(self._temps.values()), {}
        for temp in temps:
            temp.discard()

    def _adopt(self, temps: dict[Path, "_Temp"]) -> None:
        for key, temp in temps.items():
            old = self._temps.pop(key, None)
            if old is not None and old is not temp:
                old.discard()
            self._temps[key] = temp


def reserve(*targets: str | os.PathLike | None) -> None:
    """OutputError unless each target (None skipped) can be written; makes missing parent
    directories but no temporary file."""
    for target in targets:
        if target is None or _special(_absolute(target)):
            continue
        _check_target(Path(target))
        parent = Path(target).parent
        if not os.access(parent, os.W_OK | os.X_OK):
            read_only = os.statvfs(parent).f_flag & os.ST_RDONLY
            raise OutputError(target, _REASONS[errno.EROFS if read_only else errno.EACCES])


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path that replaces `path` when the block (or the enclosing set) ends;
    removed on error."""
    with OutputSet() as out:
        tmp = out.path(path)
        try:
            with _writing(path, tmp):
                yield tmp
        except BaseException:
            out.drop(path)
            raise


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP until the block ends."""
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def _writing(target, tmp: Path) -> Iterator[Path]:
    """Errors writing `tmp` become one line naming `target`."""
    try:
        yield tmp
    except OSError as exc:
        named = {getattr(exc, "filename", None), getattr(exc, "filename2", None)} - {None}
        if named and not named & {str(tmp), os.fspath(tmp)}:
            raise  # about another file (an input read while writing)
        raise OutputError(target, _reason(exc)) from None


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def dumps_json(data: Any) -> str:
    """Stable JSON: two-space indent, keys in the order given, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json(path: str | os.PathLike, data: Any) -> None:
    write_text(path, dumps_json(data))


def _absolute(path: str | os.PathLike) -> Path:
    return Path(os.path.abspath(path))


def _special(path: Path) -> bool:
    """A device, FIFO or name leading through /dev or /proc: written in place, since a rename
    would replace the link itself (`-o /dev/stdout`), not write where it leads."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)) or _through_dev(path)


def _through_dev(path: Path) -> bool:
    """`path` or a link on its way names something in /dev or /proc."""
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


def _sweep(directory: Path) -> None:
    """Remove dead writers' temporary files (their lock is free), once per directory."""
    key = os.path.abspath(directory)
    if key in _swept:
        return
    _swept.add(key)
    try:
        entries = [e for e in os.scandir(directory) if _TEMP_NAME.match(e.name)]
    except OSError:
        return
    for entry in entries:
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.stat(entry.path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                os.unlink(entry.path)
        except OSError:  # a live writer's, or gone
            pass
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

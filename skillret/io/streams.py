"""Inputs that are streams: `-`, `/dev/fd/N` (`<(...)`), a FIFO, a character device.

Readers open a file more than once, which a stream does not allow, so `readable` copies a
stream once into an anonymous temporary file (nothing left behind even by `kill -9`). Messages
name the copy as typed (`SHOWN_AS`), so `-` stays `-`. A FIFO blocks until its writer opens it;
the CLI then says which input it waits for.
"""

from __future__ import annotations

import errno
import os
import stat

from skillret.errors import SHOWN_AS, ConfigError
from skillret.io.sniff import unreadable

STDIN = "-"
_COPY_BYTES = 1 << 20
#: (device, inode) -> (copy path, the open file behind it): a second reader gets the same copy
_copies: dict[tuple[int, int], tuple[str, object]] = {}


def is_stream(path) -> bool:
    """`-`, or an existing path that is neither a regular file nor a directory."""
    text = os.fspath(path)
    if text == STDIN:
        return True
    try:
        mode = os.stat(text).st_mode
    except (OSError, ValueError):
        return False  # the reader reports it
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def readable(path):
    """`path` unless it is a stream; then the path of its copy, read to its end here."""
    if not isinstance(path, (str, os.PathLike)) or not is_stream(path):
        return path
    typed = os.fspath(path)
    try:
        info = os.fstat(0) if typed == STDIN else os.stat(typed)
        key = (info.st_dev, info.st_ino)
        if key not in _copies:
            _copies[key] = _copy(typed)
            SHOWN_AS[_copies[key][0]] = typed
    except OSError as exc:
        raise unreadable(typed, exc) from None
    return _copies[key][0]


def release() -> None:
    """Close and forget every copy (at a command's end), so a later command reads anew."""
    for path, handle in _copies.values():
        SHOWN_AS.pop(path, None)
        handle.close()
    _copies.clear()


#: Called with the typed name when a FIFO waits for its writer over `WAIT_NOTICE` seconds
on_wait = None
WAIT_NOTICE = 2.0


def _copy(typed: str) -> tuple[str, object]:
    """The stream copied into a temporary file: (its path, the open file)."""
    import shutil  # these only when a stream is read: off the start-up path
    import tempfile
    import threading

    if typed == STDIN:
        source = open(0, "rb", closefd=False)  # noqa: SIM115 - closed below
    else:
        notice = None
        if on_wait is not None and stat.S_ISFIFO(os.stat(typed).st_mode):
            notice = threading.Timer(WAIT_NOTICE, on_wait, (typed,))
            notice.daemon = True
            notice.start()
        try:
            source = open(typed, "rb")  # noqa: SIM115 - closed below
        finally:
            if notice is not None:
                notice.cancel()
    # Linux: an unnamed file, reopened as /proc/self/fd/N; elsewhere a named one removed on close
    if os.path.isdir("/proc/self/fd"):
        target = tempfile.TemporaryFile(prefix="skillret-stream-")
        path = f"/proc/self/fd/{target.fileno()}"
    else:
        target = tempfile.NamedTemporaryFile(prefix="skillret-stream-")
        path = target.name
    try:
        with source:
            shutil.copyfileobj(source, target, _COPY_BYTES)
        target.flush()
    except OSError as exc:
        target.close()
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        where = f", copying it to {tempfile.gettempdir()}" if full else ""
        raise unreadable(typed, exc, where) from None
    return path, target


def one_stdin(values: dict[str, object]) -> None:
    """ConfigError unless at most one value of `{option: value or [values]}` is `-` or
    `NAME=-`."""
    given = [option for option, value in values.items()
             for v in (value if isinstance(value, (list, tuple)) else [value])
             if isinstance(v, str) and (v == STDIN or v.endswith("=" + STDIN))]
    if len(given) > 1:
        raise ConfigError(f"standard input (-) is given to {' and '.join(given)}: it can be "
                          f"read once, by one of them (give the others a file or <(...))")

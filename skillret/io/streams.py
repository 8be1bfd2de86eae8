"""Inputs that are streams: ``-`` (standard input), ``/dev/fd/N`` (a shell's ``<(...)``), a
named FIFO, a character device.

Readers open a file more than once (the format is sniffed from its first bytes, then the file is
read; a Parquet file is read at offsets), which a stream does not allow. So :func:`readable`
copies a stream, once, where the path is opened, into an anonymous temporary file (``TMPDIR``;
unnamed on Linux, so nothing is left behind even by ``kill -9``) and returns a path that
reopens that copy; a regular file or a directory is returned as it is, after one ``stat``.
Messages name the copy as the argument was typed (:data:`skillret.errors.SHOWN_AS`): ``-``
stays ``-``, which the user finds in the command line (``<stdin>`` names no argument, and
with ``--run NAME=-`` it would not say which). Streams are read in the order the command opens
its inputs (a run before the qrels): a FIFO waits for its writer, as ``cat`` would, and after
a moment the CLI says which one it waits for.
"""

from __future__ import annotations

import os
import stat

from skillret.errors import SHOWN_AS, ConfigError, InputError

STDIN = "-"
_COPY_BYTES = 1 << 20
#: (device, inode) of a stream -> its copy's path (a stream can be read once: a second reader
#: of the same stream gets the same copy)
_copies: dict[tuple[int, int], str] = {}
_keep: list = []  # the open temporary files behind the copies' paths


def is_stream(path) -> bool:
    """``-``, or an existing path that is neither a regular file nor a directory."""
    text = os.fspath(path)
    if text == STDIN:
        return True
    try:
        mode = os.stat(text).st_mode
    except (OSError, ValueError):
        return False  # missing or unreadable: the reader says so, naming the path
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def readable(path):
    """``path`` when it is a regular file or a directory (or missing); for a stream, the path of
    its copy, read to its end here."""
    if path is None or not isinstance(path, (str, os.PathLike)) or not is_stream(path):
        return path
    typed = os.fspath(path)
    try:
        info = os.fstat(0) if typed == STDIN else os.stat(typed)
    except OSError as exc:
        raise InputError(typed, f"cannot be read ({exc.strerror or exc})") from None
    key = (info.st_dev, info.st_ino)
    if key not in _copies:
        _copies[key] = _copy(typed)
        SHOWN_AS[_copies[key]] = typed
    return _copies[key]


def release() -> None:
    """Close and forget every copy (the end of a command): a stream read again later, by
    another command in the same process, is read anew."""
    for path in _copies.values():
        SHOWN_AS.pop(path, None)
    _copies.clear()
    while _keep:
        _keep.pop().close()


def _copy(typed: str) -> str:
    import errno
    import shutil
    import tempfile

    try:
        source = _open(typed)
    except OSError as exc:
        raise InputError(typed, f"cannot be read ({exc.strerror or exc})") from None
    target, path = _temporary()
    try:
        with source:
            shutil.copyfileobj(source, target, _COPY_BYTES)
        target.flush()
    except OSError as exc:
        target.close()
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        where = f", copying it to {tempfile.gettempdir()}" if full else ""
        raise InputError(typed, f"cannot be read ({exc.strerror or exc}{where})") from None
    _keep.append(target)
    return path


#: Called with the typed name when opening a FIFO waits for its writer longer than
#: :data:`WAIT_NOTICE` seconds (the CLI prints a note: who else would say why nothing happens)
on_wait = None
WAIT_NOTICE = 2.0


def _open(typed: str):
    if typed == STDIN:
        return open(0, "rb", closefd=False)
    notice = None
    if on_wait is not None and stat.S_ISFIFO(os.stat(typed).st_mode):
        import threading

        notice = threading.Timer(WAIT_NOTICE, on_wait, (typed,))
        notice.daemon = True
        notice.start()
    try:
        return open(typed, "rb")  # a FIFO: blocks until a writer opens it
    finally:
        if notice is not None:
            notice.cancel()


def _temporary():
    """An open temporary file, and a path that opens it again at its own offset: on Linux, an
    unnamed file and its ``/proc/self/fd/N``; elsewhere a named one, removed when closed."""
    import tempfile

    if os.path.isdir("/proc/self/fd"):
        handle = tempfile.TemporaryFile(prefix="skillret-stream-")
        return handle, f"/proc/self/fd/{handle.fileno()}"
    handle = tempfile.NamedTemporaryFile(prefix="skillret-stream-")
    return handle, handle.name


def one_stdin(values: dict[str, object]) -> None:
    """Standard input can be read once: ``{option: value or [values]}`` may give ``-``
    (alone, or as ``NAME=-``) to one option, once."""
    given = [option for option, value in values.items()
             for v in (value if isinstance(value, (list, tuple)) else [value])
             if isinstance(v, str) and (v == STDIN or v.endswith("=" + STDIN))]
    if len(given) > 1:
        raise ConfigError(f"standard input (-) is given to {' and '.join(given)}: it can be "
                          f"read once, by one of them (give the others a file or <(...))")

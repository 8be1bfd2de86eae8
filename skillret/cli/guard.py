"""One guard around a whole command or pipeline stage: reading, computing and writing.

Bad input, an unwritable output, a full disk: one line on stderr naming the file, exit status 2,
and no output changed (everything is written in one `OutputSet`). A standard output closed
early (`| head`) is not an error of the outputs: they are kept, and the process ends quietly
with the status of a process stopped by SIGPIPE, as Unix tools do.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from typing import NoReturn

from skillret.errors import SkillretError
from skillret.io.atomic import OutputSet

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def guarded(work, prog: str = "skillret-eval") -> int:
    """Run `work()` inside one output set; return the process's exit status."""
    broken_pipe = False
    try:
        with OutputSet():
            try:
                result = work()
                sys.stdout.flush()
            except BrokenPipeError:
                broken_pipe = True
    except SkillretError as exc:
        return _fail(prog, str(exc))
    except OSError as exc:
        return _fail(prog, _os_error(exc))
    except MemoryError:
        return _fail(prog, OUT_OF_MEMORY)
    except Exception as exc:  # noqa: BLE001 - only a thread that could not start is ours
        if not _no_thread(exc):
            raise
        return _fail(prog, f"{OUT_OF_MEMORY}: a reading thread could not be started")
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    if broken_pipe:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    return result if isinstance(result, int) else 0


OUT_OF_MEMORY = ("out of memory (inputs are bounded by --max-input-size and --max-json-depth; "
                 "TREC and Parquet runs are streamed)")


def _no_thread(exc: Exception) -> bool:
    """Python's or Arrow's error for a thread the system would not start: under an
    address-space limit (`ulimit -v`), a new thread's stack may not fit."""
    text = str(exc)
    return ((type(exc) is RuntimeError and text == "can't start new thread")
            or (type(exc).__name__ == "ArrowException" and "Failed to launch thread" in text))


def _fail(prog: str, message: str) -> int:
    print(f"{prog}: error: {' '.join(message.splitlines())}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _os_error(exc: OSError) -> str:
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is not None:
        return f"{os.fsdecode(exc.filename)}: {reason}"
    return reason


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def finish(status: int) -> NoReturn:
    """End the process with `status` (the console script and every stage script do)."""
    if status:
        # a failed command's traceback holds Arrow objects in cycles: collected now, while
        # Arrow is whole, not after its thread pools at exit (apache/arrow#34314)
        gc.collect()
    sys.exit(status)

"""One guard around a whole command or pipeline stage: reading, computing and writing.

Bad input, an unwritable output, a full disk: one line on stderr, exit status 2, no output
changed (one `OutputSet`). A stdout closed early (`| head`) keeps the outputs and ends quietly
with SIGPIPE's status. SIGINT, SIGTERM and SIGHUP remove the temporary files and end with
128 + the signal's number. `stage` is a pipeline stage's command line (`python -m stages.<name>`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from typing import NoReturn

from skillret.errors import SkillretError
from skillret.io.atomic import OutputSet
from skillret.io import streams

EXIT_BAD_INPUT = 2
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


class Stopped(BaseException):
    """A signal's number, raised where the main thread was, so every `with` block on the way
    out cleans up."""


def _stop(signum, frame) -> NoReturn:
    raise Stopped(signum)


def guarded(work, prog: str = "skillret-eval") -> int:
    """Run `work()` inside one output set; return the process's exit status."""
    streams.on_wait = lambda name: print(f"{prog}: note: waiting for a writer to open {name}",
                                         file=sys.stderr, flush=True)
    previous = {}  # SIGTERM and SIGHUP raise `Stopped` inside (in the main thread only)
    for signum in (signal.SIGTERM, signal.SIGHUP):  # SIGINT is Python's KeyboardInterrupt
        with contextlib.suppress(ValueError):  # not the main thread: they keep their handlers
            previous[signum] = signal.signal(signum, _stop)
    try:
        with OutputSet():
            try:
                result = work()
                sys.stdout.flush()
            except BrokenPipeError:  # the outputs are kept; `finish` does not flush again
                result = EXIT_BROKEN_PIPE
    except SkillretError as exc:
        return _fail(prog, str(exc))
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        return _fail(prog, reason if exc.filename is None
                     else f"{os.fsdecode(exc.filename)}: {reason}")
    except MemoryError:
        return _fail(prog, OUT_OF_MEMORY)
    except Exception as exc:  # noqa: BLE001 - only a thread that could not start is ours
        text = str(exc)  # Python's or Arrow's error for a thread the system would not start
        if not ((type(exc) is RuntimeError and text == "can't start new thread")
                or (type(exc).__name__ == "ArrowException" and "Failed to launch thread" in text)):
            raise
        return _fail(prog, f"{OUT_OF_MEMORY}: a reading thread could not be started")
    except (KeyboardInterrupt, Stopped) as exc:
        signum = exc.args[0] if isinstance(exc, Stopped) else signal.SIGINT
        print(f"{prog}: stopped by {signal.Signals(signum).name}", file=sys.stderr)
        return 128 + signum
    finally:
        streams.release()  # the copies of the streams read
        streams.on_wait = None
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return result if isinstance(result, int) else 0


OUT_OF_MEMORY = ("out of memory (inputs are bounded by --max-input-size and --max-json-depth; "
                 "TREC and Parquet runs are streamed)")


def _fail(prog: str, message: str) -> int:
    print(f"{prog}: error: {' '.join(message.splitlines())}", file=sys.stderr)
    return EXIT_BAD_INPUT


def tell(kind: str, lines) -> None:
    for line in lines:
        print(f"skillret-eval: {kind}: {line}", file=sys.stderr)


def finish(status: int) -> NoReturn:
    """End the process with `status` once stdout and stderr are flushed, without the
    interpreter's shutdown: every output is written and closed by then, and that shutdown stops
    Arrow's thread pools, which can abort a finished command (std::terminate, exit -6;
    apache/arrow#34314)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # a reader that stopped early: as in `guarded`
            status = status or EXIT_BROKEN_PIPE
        except (OSError, ValueError):  # a closed stream has nothing more to say
            pass
    os._exit(status)


def stage(doc: str, step, prog: str, *arguments: tuple[str, dict]) -> None:
    """Parse the stage's `arguments` (argparse's name, options), run `step(args)` guarded as `prog`
    (`{name}`: the NAME argument), and exit with its status."""
    parser = argparse.ArgumentParser(description=doc.partition("\n\n")[0])
    for flag, options in arguments:
        parser.add_argument(flag, **options)
    args = parser.parse_args()
    finish(guarded(lambda: step(args), prog=prog.format(**vars(args))))

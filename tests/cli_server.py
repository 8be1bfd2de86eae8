"""``python -m skillret.cli ARGS`` in a process of its own, without the interpreter's start-up.

A small command takes about 0.3 s of CPU in a fresh interpreter, nearly all of it importing
numpy and pyarrow; the test suite runs a few hundred. Here one server process imports those (and
the package's command modules, never pandas or DVC) once, and every command runs in a child
forked from it: a real process with its own pid, working directory, umask, environment, standard
streams (stdin from /dev/null, stdout and stderr to pipes) and exit status, running
``skillret.cli``'s ``__main__`` (through :mod:`runpy`, as ``python -m`` does) to the end of its
interpreter's shutdown (threads joined, atexit, buffers flushed; then ``os._exit``, without
C's static destructors, see below). An exception that
escapes prints its traceback and exits 1, a signal gives a negative status: what
:func:`subprocess.run` reports of a fresh interpreter.

What a fork cannot stand for, tests keep fresh interpreters for: what a command imports (the
"lean" tests), what is read from the environment at import time (``OPENBLAS_NUM_THREADS``),
address-space limits, and races around the interpreter's start and shutdown.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: The server: import once, then fork one child per request (a JSON line on stdin) and answer
#: with the child's exit status (a JSON line on stdout).
_SERVER = r"""
import importlib, json, os, runpy, selectors, sys
for name in PRELOAD:
    try:
        importlib.import_module(name)
    except ImportError:                                   # a module since renamed: only slower
        pass
assert "pandas" not in sys.modules and "dvc" not in sys.modules
import gc
gc.freeze()                     # the children's collections leave the server's objects alone
protocol_in = os.fdopen(os.dup(0), "r")
protocol_out = os.fdopen(os.dup(1), "w")
for line in protocol_in:
    request = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:                                          # the command's own process
        protocol_in.close()
        protocol_out.close()
        os.close(out_r)
        os.close(err_r)
        os.chdir(request["cwd"])
        os.umask(request["umask"])
        os.environ.clear()
        os.environ.update(request["env"])
        null = os.open(os.devnull, os.O_RDONLY)
        for opened, fd in ((null, 0), (out_w, 1), (err_w, 2)):
            os.dup2(opened, fd)
            os.close(opened)
        code = 0
        try:
            if request["code"] is None:                   # python -m skillret.cli ARGS
                sys.argv = ["-m", *request["argv"]]
                runpy.run_module("skillret.cli", run_name="__main__", alter_sys=True)
            else:                                         # python -c CODE ARGS
                sys.argv = ["-c", *request["argv"]]
                exec(compile(request["code"], "<string>", "exec"), {"__name__": "__main__"})
        except SystemExit as exc:                         # what the interpreter makes of it
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        # the interpreter's shutdown, up to C's exit(): threads joined, atexit, streams flushed.
        # Not C's static destructors: in a child forked from a process that imported Arrow,
        # Arrow's thread pool could abort there ("terminate called without an active
        # exception", 12 of 450 failing commands under load; 0 of 240 in fresh interpreters).
        import atexit, threading
        threading._shutdown()
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                code = code or 120                        # as Python does when a flush fails
        os._exit(code & 0xFF)
    os.close(out_w)
    os.close(err_w)
    streams = {out_r: bytearray(), err_r: bytearray()}
    with selectors.DefaultSelector() as selector:         # both pipes, as communicate() reads
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            for key, _ in selector.select():
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    streams[key.fd] += chunk
                else:
                    selector.unregister(key.fd)
                    os.close(key.fd)
    _, status = os.waitpid(pid, 0)
    protocol_out.write(json.dumps([os.waitstatus_to_exitcode(status),
                                   streams[out_r].decode("latin-1"),
                                   streams[err_r].decode("latin-1")]) + "\n")
    protocol_out.flush()
"""

#: What the commands import (a score, a validation, a fusion), imported once. (Not scipy, for
#: comparisons: the bigger the server, the dearer each fork.)
PRELOAD = [
    "concurrent.futures", "csv", "gzip", "numpy", "numpy.ma", "pyarrow", "pyarrow.compute",
    "pyarrow.csv", "pyarrow.parquet",
    "skillret.analysis.breakdown", "skillret.analysis.compare", "skillret.analysis.fusion",
    "skillret.cli", "skillret.cli.compare", "skillret.cli.score",
    "skillret.columnar.convert", "skillret.io.atomic", "skillret.io.documents",
    "skillret.io.per_query", "skillret.io.prefetch", "skillret.io.readers",
    "skillret.io.table_files", "skillret.io.write_runs",
    "skillret.measures.registry", "skillret.pipeline.params", "skillret.pipeline.run_stages",
    "skillret.render.tables", "skillret.scoring.evaluator", "skillret.validation.checks",
]
_server: subprocess.Popen | None = None


def _stop() -> None:
    if _server is not None and _server.poll() is None:
        _server.stdin.close()
        _server.wait(timeout=60)
        _server.stdout.close()


def _started() -> subprocess.Popen:
    global _server
    if _server is None or _server.poll() is not None:
        code = f"PRELOAD = {PRELOAD!r}\n{_SERVER}"
        _server = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
        atexit.register(_stop)
    return _server


def _text(data: bytes) -> str:
    """Bytes as ``subprocess.run(..., text=True)`` decodes them."""
    import locale
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n") \
        .replace("\r", "\n")


def run(*args, cwd=None, env: dict | None = None) -> subprocess.CompletedProcess:
    """``subprocess.run([sys.executable, "-m", "skillret.cli", *args], capture_output=True,
    text=True, cwd=cwd, env=env)``, in a child of the server."""
    return _request(None, [str(a) for a in args], cwd, env)


def run_code(code: str, *args, cwd=None, env: dict | None = None) -> subprocess.CompletedProcess:
    """``subprocess.run([sys.executable, "-c", code, *args], ...)`` likewise: for code that
    drives :func:`skillret.cli.main` and then looks at the process (what it imported)."""
    return _request(code, [str(a) for a in args], cwd, env)


def _request(code: str | None, argv: list[str], cwd, env) -> subprocess.CompletedProcess:
    umask = os.umask(0o022)
    os.umask(umask)
    server = _started()
    request = {"code": code, "argv": argv, "umask": umask,
               "cwd": str(Path(cwd) if cwd is not None else Path.cwd()),
               "env": dict(os.environ if env is None else env)}
    server.stdin.write(json.dumps(request) + "\n")
    server.stdin.flush()
    answer = server.stdout.readline()
    if not answer:
        raise RuntimeError(f"the CLI server died (status {server.wait()})")
    status, stdout, stderr = json.loads(answer)
    command = [sys.executable, "-m", "skillret.cli"] if code is None else \
        [sys.executable, "-c", code]
    return subprocess.CompletedProcess([*command, *argv], status,
                                       _text(stdout.encode("latin-1")),
                                       _text(stderr.encode("latin-1")))

"""``dvc ARGS`` in a process of its own, without importing DVC each time.

A ``dvc`` command in a fresh interpreter spends about half its CPU importing DVC; the pipeline
tests run a few hundred. Here one server process per test worker imports DVC once, and
:func:`bin_dir` holds a ``dvc`` executable (put first on PATH, or called by path) that hands its
argv, working directory, umask, environment and standard streams (the file descriptors
themselves) to the server over a Unix socket. The server forks a child that runs
``dvc.cli.main`` with them, to the end of the interpreter's shutdown (threads joined, atexit,
streams flushed), and sends back its exit status, with which the ``dvc`` executable exits.
The stages DVC runs, and the processes DVC starts itself (queue workers), are fresh
interpreters, as they are for a user.

Not imported in the server: pygit2 (libgit2 reads where the global git config is, from HOME,
when it starts; every test has a HOME of its own), pandas and skillret.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_SERVER = r"""
import importlib, json, os, selectors, socket, sys
for name in PRELOAD:
    importlib.import_module(name)
assert not {"pygit2", "pandas", "skillret"} & set(sys.modules), "imported at start-up"
import gc
gc.freeze()
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(64)
print("ready", flush=True)
selector = selectors.DefaultSelector()
selector.register(listener, selectors.EVENT_READ)
selector.register(sys.stdin, selectors.EVENT_READ)        # closed: the tests are done
while True:
    if any(key.fileobj is sys.stdin for key, _ in selector.select()):
        break
    connection, _ = listener.accept()
    while True:                                           # the children that have ended
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    if os.fork():
        connection.close()
        continue
    selector.close()
    listener.close()
    header, fds, _, _ = socket.recv_fds(connection, 8, 3)
    size, payload = int.from_bytes(header, "big"), b""
    while len(payload) < size:
        payload += connection.recv(size - len(payload))
    request = json.loads(payload)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, target in zip(fds, (0, 1, 2)):
        os.dup2(fd, target)
        os.close(fd)
    sys.argv = request["argv"]
    code = 0
    try:
        from dvc.cli import main
        code = main(sys.argv[1:])
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    import atexit, threading
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = code or 120
    connection.sendall(bytes([(code or 0) & 0xFF]))
    os._exit((code or 0) & 0xFF)
"""

#: The ``dvc`` executable: the client, in an interpreter that imports nothing of site-packages.
_CLIENT = r"""#!{python} -SE
import json, os, socket, sys
umask = os.umask(0)
os.umask(umask)
payload = json.dumps({{"argv": [{dvc!r}, *sys.argv[1:]], "cwd": os.getcwd(), "umask": umask,
                      "env": dict(os.environ)}}).encode()
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
    server.connect({socket!r})
    socket.send_fds(server, [len(payload).to_bytes(8, "big")], [0, 1, 2])
    server.sendall(payload)
    status = server.recv(1)
sys.exit(status[0] if status else 1)
"""

#: What ``dvc repro``, ``exp run``, ``exp show``, ``metrics diff``, ``plots`` and ``push``
#: import (but pygit2), imported once.
PRELOAD = [
    "dvc.cli", "dvc.cli.parser", "dvc.repo", "dvc.repo.index", "dvc.repo.reproduce",
    "dvc.repo.experiments", "dvc.repo.experiments.show", "dvc.repo.experiments.run",
    "dvc.repo.metrics.diff", "dvc.repo.metrics.show", "dvc.repo.params.show",
    "dvc.repo.plots", "dvc.stage", "dvc.stage.cache", "dvc.output", "dvc.dvcfile",
    "dvc.commands.repro", "dvc.commands.metrics", "dvc.commands.experiments",
    "dvc.commands.data_sync", "dvc.commands.plots", "dvc.commands.status",
    "dvc_data.index", "dvc_data.hashfile", "scmrepo.git", "scmrepo.git.backend.dulwich",
    "dulwich.repo", "dulwich.porcelain", "dulwich.worktree", "funcy", "networkx",
    "dvc.cachemgr", "dvc.data_cloud", "dvc.ui", "dvc_data.fs", "fsspec.implementations.local",
    "configobj", "pyparsing", "platformdirs", "ruamel.yaml", "unittest.mock",
    "dvc.repo.experiments.queue.celery", "celery", "kombu", "amqp", "billiard",
    "celery.worker", "celery.app.amqp", "celery.canvas", "dvc.repo.artifacts",
    "dvc.repo.datasets", "dvc.repo.open_repo", "dvc.repo.stage", "dvc.repo.graph",
    "dvc.repo.trie", "dvc.repo.brancher", "dvc.repo.params.diff", "dvc.utils.strictyaml",
    "dvc.ui.table", "dvc_data.hashfile.db.local", "fsspec.implementations.memory",
]
_server: subprocess.Popen | None = None
_bin: Path | None = None


def _stop() -> None:
    if _server is not None and _server.poll() is None:
        _server.stdin.close()
        _server.wait(timeout=60)
    if _bin is not None:
        shutil.rmtree(_bin.parent, ignore_errors=True)


def bin_dir() -> Path:
    """A folder whose ``dvc`` runs in a child of this worker's server (started on first use)."""
    global _server, _bin
    if _server is None or _server.poll() is not None:
        where = Path(tempfile.mkdtemp(prefix="dvc-server-"))
        socket_path = where / "socket"
        _server = subprocess.Popen(
            [sys.executable, "-c", f"PRELOAD = {PRELOAD!r}\n{_SERVER}", str(socket_path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=where)
        if _server.stdout.readline() != "ready\n":
            raise RuntimeError(f"the DVC server did not start (status {_server.wait()})")
        _bin = where / "bin"
        _bin.mkdir()
        dvc = Path(sys.executable).parent / "dvc"
        client = _bin / "dvc"
        client.write_text(_CLIENT.format(python=sys.executable, dvc=str(dvc),
                                         socket=str(socket_path)))
        client.chmod(0o755)
        atexit.register(_stop)
    return _bin


def command() -> list[str]:
    """``["dvc"]`` as a list for :func:`subprocess.run`, by path."""
    return [str(bin_dir() / "dvc")]


def path(rest: str) -> str:
    """``PATH`` with the server's ``dvc`` first, then ``rest``."""
    return f"{bin_dir()}{os.pathsep}{rest}"

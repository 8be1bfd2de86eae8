"""What every fuzz target shares: instrumenting skillret, temp files, the allowed outcomes.

Not a target itself (targets are ``fuzz_*.py``). A target imports :func:`setup` first, then
calls :func:`library` or :func:`cli` with the work for one input.

Allowed outcomes (issue #21, item 8):

* the library: success, or an :class:`skillret.errors.SkillretError` (``InputError`` and kin);
  anything else escaping is a finding, and atheris reports it with its traceback;
* the CLI: exit status 0, 1 or 2; on an error (status 2) at most one line on stderr (notes and
  warnings aside); no ``Traceback`` anywhere; argparse's own usage errors (SystemExit 2) are
  fine, and so is no command at all (the help on stdout, status 2).

Hangs and memory are libFuzzer's: ``-timeout=10`` and ``-rss_limit_mb=1536``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import os
import pkgutil
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parent.parent
#: One scratch directory per fuzzing process; every input is written into it.
SCRATCH = Path(tempfile.mkdtemp(prefix="skillret-fuzz-"))
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)

#: A small valid qrels file and run, the other half of ``evaluate(qrels, run)``.
QRELS_TEXT = b"q1 0 s1 1\nq1 0 s2 2\nq2 0 s3 1\nq3 0 s1 0\n"
RUN_TEXT = (b"q1 Q0 s1 1 3.5 t\nq1 Q0 s9 2 2.0 t\nq1 Q0 s2 3 1.0 t\n"
            b"q2 Q0 s3 1 0.5 t\nq2 Q0 s1 2 0.25 t\n")


def setup() -> None:
    """Instrument every skillret module (imported here, since the package imports lazily) and
    write the fixed qrels and run. Call before ``atheris.Setup``."""
    warnings.simplefilter("ignore")  # numpy's RuntimeWarnings are not findings
    import skillret
    with atheris.instrument_imports(include=["skillret"]):
        for info in pkgutil.walk_packages(skillret.__path__, "skillret."):
            if ".pipeline" in info.name or info.name.endswith("__main__"):
                continue  # DVC stages (not reached from the readers or CLI); ``python -m``
            with contextlib.suppress(ImportError):
                importlib.import_module(info.name)
    (SCRATCH / "fixed.qrels").write_bytes(QRELS_TEXT)
    (SCRATCH / "fixed.trec").write_bytes(RUN_TEXT)


def fixed_qrels() -> Path:
    return SCRATCH / "fixed.qrels"


def fixed_run() -> Path:
    return SCRATCH / "fixed.trec"


def write(name: str, data: bytes) -> Path:
    """``data`` as a file called ``name`` in the scratch directory."""
    path = SCRATCH / name
    path.write_bytes(data)
    return path


def library(work) -> None:
    """Run ``work()``; a SkillretError is an allowed outcome, anything else propagates."""
    from skillret.errors import SkillretError
    try:
        work()
    except SkillretError as exc:
        message = str(exc)
        if os.environ.get("FUZZ_SHOW"):
            print(f"{type(exc).__name__}: {message}", file=sys.__stderr__)
        if "\n" in message or not message.strip():
            raise AssertionError(f"error message is not one line: {message!r}") from exc


def read_run(path: Path, *, how: str, **options) -> None:
    """A run path through the public API, as a caller would: ``open_run`` then ``read()``, or
    ``chunks()`` (falling back to ``read()`` when the file is not grouped, as documented), or
    ``evaluate`` against the fixed qrels."""
    import skillret
    from skillret.columnar.runs import NotGrouped

    with_rank = options.pop("with_rank", False)
    if how == "evaluate":
        skillret.evaluate(str(fixed_qrels()), skillret.open_run(path, **options))
        return
    source = skillret.open_run(path, **options)
    if how == "read":
        source.read(with_rank=with_rank)
        return
    chunks = source.chunks(with_rank=with_rank)
    try:
        for _ in chunks:
            pass
    except NotGrouped:
        source.read(with_rank=with_rank)
    finally:
        chunks.close()


def read_qrels(path: Path, *, evaluate: bool, **options) -> None:
    import skillret
    qrels = skillret.read_qrels(path, **options)
    if evaluate:
        skillret.evaluate(qrels, str(fixed_run()))


def cli(argv: list[str], cwd: Path) -> None:
    """``skillret.cli.main(argv)`` in ``cwd``, stdout and stderr captured; raises on an outcome
    that is not allowed."""
    from skillret.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    status = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:  # argparse: --help, --version, usage errors
                code = exc.code
                if code not in (0, 2, None):
                    raise AssertionError(f"argparse exit {code!r} for {argv!r}") from None
                status = "argparse"
    finally:
        os.chdir(old)
    text = err.getvalue()
    if os.environ.get("FUZZ_SHOW"):  # see what an input does: FUZZ_SHOW=1 python fuzz_cli.py X
        print(f"argv={argv!r} status={status!r}\n{text}", file=sys.__stderr__)
    if "Traceback" in text or "Traceback" in out.getvalue():
        raise AssertionError(f"traceback printed for {argv!r}:\n{text}")
    if status == "argparse":
        return
    if status not in (0, 1, 2):
        raise AssertionError(f"exit status {status!r} for {argv!r}\nstderr: {text}")
    if status == 2:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        errors = [ln for ln in lines if not ln.startswith(("skillret-eval: note:",
                                                           "skillret-eval: warning:"))]
        if len(errors) > 1:  # none: no command, the help is printed (to stdout)
            raise AssertionError(f"status 2 with {len(errors)} error lines for {argv!r}:\n{text}")


def fresh_dir(name: str) -> Path:
    """An empty directory in the scratch directory (emptied if it exists)."""
    path = SCRATCH / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    return path


def main(test_one_input) -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()

"""Errors that reach the user as one line (`str(error)`, exit status 2): the file, the line when
there is one, the reason, a fix."""

from __future__ import annotations

import os
from dataclasses import dataclass


# Paths that messages show by another name: a stream's copy shown as typed (`-`, `/dev/fd/63`).
SHOWN_AS: dict[str, str] = {}


class SkillretError(Exception):
    """Base class of the errors this package raises on purpose."""


@dataclass(frozen=True)
class Fix:
    """A setting that fixes an input error: the CLI option, its value, and the `params.yaml` key
    under the run's section (None: only the option exists)."""

    option: str
    value: str | None = None
    key: str | None = None


class InputError(SkillretError):
    """A problem with an input: `path:line: reason (hint)`; `line` only for line-oriented text.

    `fix` is shown where `{fix}` stands in `hint` (else after it): as the option (right after
    `--run RUN` when `run` is set), or as the `params.yaml` key under `section` when it is set."""

    def __init__(self, path: str | os.PathLike | None, reason: str, *, line: int | None = None,
                 hint: str | None = None, fix: Fix | None = None):
        self.path = None if path is None else SHOWN_AS.get(os.fspath(path), os.fspath(path))
        self.line = line
        self.reason = reason
        self.hint = hint
        self.fix = fix
        self.run: str | None = None
        self.section: str | None = None
        super().__init__(path, reason)

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        text = f"{where}: {self.reason}"
        hint = self.hint
        if self.fix is not None:
            fix, value = self.fix, self.fix.value
            if self.section and fix.key:
                shown = f"set {self.section}.{fix.key}" + (f": {value}" if value else "") + \
                    " in params.yaml"
            else:
                shown = f"pass {fix.option}" + (f" {value}" if value else "") + \
                    (f" right after --run {self.run}" if self.run else "")
            hint = hint.replace("{fix}", shown) if hint and "{fix}" in hint else \
                f"{hint}; {shown}" if hint else shown
        if hint:
            text += f" ({hint})"
        return " ".join(text.split("\n"))

    def shown_with(self, run: str | None = None, section: str | None = None) -> "InputError":
        """This error, its fix shown after `--run run`, or as a key under `section`."""
        self.run, self.section = run, section
        return self


class OutputError(SkillretError):
    """`path: cannot write (reason)`; nothing was replaced."""

    def __init__(self, path: str | os.PathLike, reason: str):
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(" ".join(f"{self.path}: cannot write ({reason})".split("\n")))


class ConfigError(SkillretError):
    """A problem with a profile, a params file or a command-line option."""


class ValidationFailed(SkillretError):
    """Validation found errors (or warnings under `strict`); the report is attached."""

    def __init__(self, message: str, report: dict | None = None):
        self.report = report
        super().__init__(message)

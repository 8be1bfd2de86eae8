"""Errors that reach the user as one line (`str(error)`, exit status 2): the file, the line when
there is one, the reason, a fix."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable


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

    def as_option(self, run: str | None = None) -> str:
        """`pass --columns VALUE` (`right after --run RUN` when several runs are read)."""
        text = f"pass {self.option}" + (f" {self.value}" if self.value else "")
        return text + (f" right after --run {run}" if run else "")

    def as_param(self, section: str) -> str:
        """`set run_options.NAME.columns: VALUE in params.yaml` (the option when no key)."""
        if self.key is None:
            return self.as_option()
        return f"set {section}.{self.key}" + (f": {self.value}" if self.value else "") + \
            " in params.yaml"


class InputError(SkillretError):
    """A problem with an input: `path:line: reason (hint)`; `line` only for line-oriented text.

    `fix` is shown where `{fix}` stands in `hint` (else after it), by `show_fix` (default: as
    an option)."""

    def __init__(self, path: str | os.PathLike | None, reason: str, *, line: int | None = None,
                 hint: str | None = None, fix: Fix | None = None):
        self.path = None if path is None else SHOWN_AS.get(os.fspath(path), os.fspath(path))
        self.line = line
        self.reason = reason
        self.hint = hint
        self.fix = fix
        self.show_fix: Callable[[Fix], str] = Fix.as_option
        super().__init__(self.message)

    @property
    def message(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        text = f"{where}: {self.reason}"
        hint = self.hint
        if self.fix is not None:
            fix = self.show_fix(self.fix)
            hint = hint.replace("{fix}", fix) if hint and "{fix}" in hint else \
                f"{hint}; {fix}" if hint else fix
        if hint:
            text += f" ({hint})"
        return " ".join(text.split("\n"))

    def shown_with(self, show_fix: Callable[[Fix], str]) -> "InputError":
        """This error, its fix shown by `show_fix`."""
        self.show_fix = show_fix
        self.args = (self.message,)
        return self

    def add_hint(self, text: str) -> "InputError":
        """This error with `text` added to its hint (after the one it has)."""
        self.hint = f"{self.hint}; {text}" if self.hint else text
        self.args = (self.message,)
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

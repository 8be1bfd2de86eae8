"""Errors that reach the user as one line: the file, the line when there is one, the reason, a fix.

Every problem with an input file raises :class:`InputError`. The CLI prints ``str(error)`` and
exits with status 2; no traceback, no output file.
"""

from __future__ import annotations

import os


class SkillretError(Exception):
    """Base class of the errors this package raises on purpose."""


class InputError(SkillretError):
    """A problem with an input: ``path:line: reason (hint)``.

    ``line`` is 1-based and given only for line-oriented text formats.
    """

    def __init__(self, path: str | os.PathLike | None, reason: str, *, line: int | None = None,
                 hint: str | None = None):
        self.path = None if path is None else os.fspath(path)
        self.line = line
        self.reason = reason
        self.hint = hint
        super().__init__(self.message)

    @property
    def message(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        text = f"{where}: {self.reason}"
        if self.hint:
            text += f" ({self.hint})"
        return " ".join(text.split("\n"))

    def __str__(self) -> str:
        return self.message

    def add_hint(self, text: str) -> "InputError":
        """This error with ``text`` added to its hint (after the one it has)."""
        self.hint = f"{self.hint}; {text}" if self.hint else text
        self.args = (self.message,)
        return self


class OutputError(SkillretError):
    """An output that cannot be written: ``path: cannot write (reason)``. Nothing was replaced."""

    def __init__(self, path: str | os.PathLike, reason: str):
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(" ".join(f"{self.path}: cannot write ({reason})".split("\n")))


class ConfigError(SkillretError):
    """A problem with a profile, a params file or a command-line option."""


class ValidationFailed(SkillretError):
    """Validation found errors (or warnings under ``strict``); the report is attached."""

    def __init__(self, message: str, report: dict | None = None):
        self.report = report
        super().__init__(message)

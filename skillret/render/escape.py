"""Escape names (e.g. `bm25_x&y%`) so LaTeX and Markdown print them as typed."""

from __future__ import annotations

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}", "\n": " ", "\r": " "}
_MARKDOWN = {"|": r"\|", "\\": "\\\\", "*": r"\*", "_": r"\_", "<": "&lt;", ">": "&gt;",
             "`": r"\`", "[": r"\[", "]": r"\]", "\n": " ", "\r": " "}


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(c, c) for c in str(text))


def markdown_escape(text: str) -> str:
    return "".join(_MARKDOWN.get(c, c) for c in str(text))

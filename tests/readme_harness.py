"""Run the README as a user would: every command block, in order, in a fresh project.

Blocks the harness reads (everything else is prose or a file's content):

- ```` ```console ````: lines starting with ``$ `` are commands; the lines after one, up to the
  next command, are its output. A line ``...`` stands for any number of lines; ``...`` inside a
  line for any text. Whitespace runs compare as one space. A command with no output shown is
  only required to succeed.
- ```` ```bash ````: every line is a command (``\\`` continues a line; comments are dropped);
  each must succeed, its output is not compared.
- A block preceded by ``<!-- readme: not run (reason) -->`` is skipped; the reason is reported.

Commands run with bash in one project (a copy of the repository's files, committed to a fresh git
repository), one after the other, so a section can build on the previous one, with a virtualenv
of their own on PATH (layered over the test's environment, so ``pip install -e .`` installs this
copy without downloading the dependencies again), COLUMNS=120, and their own git identity.

    python tests/readme_harness.py [README.md]     # print what each command prints
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"<!--\s*readme:\s*not run\s*\((.*?)\)\s*-->\s*$")
GAP = "..."
GIT_ENV = {
    "GIT_AUTHOR_NAME": "readme tests", "GIT_AUTHOR_EMAIL": "readme@skillret.invalid",
    "GIT_COMMITTER_NAME": "readme tests", "GIT_COMMITTER_EMAIL": "readme@skillret.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "DVC_NO_ANALYTICS": "1", "COLUMNS": "120",
}
#: Commands the harness does not run inside a test, and where they do run instead.
RUN_ELSEWHERE = {'pip install -e ".[test]" && pytest': ".ci/run (CI runs it on a clean clone)"}


@dataclass
class Command:
    text: str
    line: int                      # README line of the command
    expected: list[str] | None     # None: output not compared
    section: str


@dataclass
class Block:
    lang: str
    line: int
    section: str
    commands: list[Command] = field(default_factory=list)
    skipped: str | None = None


def section_at(text: str, offset: int) -> str:
    heads = re.findall(r"^#+ (.*)$", text[:offset], re.M)
    return heads[-1] if heads else ""


def parse(text: str) -> list[Block]:
    blocks = []
    for match in FENCE.finditer(text):
        lang, body = match.group(1), match.group(2)
        if lang not in ("console", "bash"):
            continue
        line = text.count("\n", 0, match.start()) + 1
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        block = Block(lang, line, section_at(text, match.start()))
        skip = SKIP.search(before)
        if skip:
            block.skipped = skip.group(1)
        lines = body.split("\n")[:-1]
        if lang == "bash":
            joined = "\n".join(lines).replace("\\\n", " ")
            for n, raw in enumerate(joined.split("\n")):
                command = raw.split(" #")[0].strip() if not raw.lstrip().startswith("#") else ""
                if command:
                    block.commands.append(Command(" ".join(command.split()), line + 1 + n, None,
                                                  block.section))
        else:
            current = None
            for n, raw in enumerate(lines):
                if raw.startswith("$ "):
                    current = Command(raw[2:].strip(), line + 1 + n, [], block.section)
                    block.commands.append(current)
                elif current is not None:
                    current.expected.append(raw)
            for command in block.commands:
                while command.expected and not command.expected[-1].strip():
                    command.expected.pop()
                if not command.expected:
                    command.expected = None
        blocks.append(block)
    return blocks


def normal(line: str) -> str:
    return " ".join(line.split())


def output_matches(expected: list[str], actual: str) -> bool:
    parts = []
    for line in expected:
        if line.strip() == GAP:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(re.escape(p) for p in normal(line).split(GAP)) + r"\n")
    lines = [normal(line) for line in actual.splitlines()]
    text = "\n".join(lines) + "\n" if lines else ""
    return re.fullmatch("".join(parts), text) is not None


def make_project(target: Path) -> Path:
    """The repository's files (tracked and new, not ignored), committed to a fresh git repo."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    env = {**os.environ, **GIT_ENV}
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                 ["git", "commit", "-qm", "skillret-eval"]):
        subprocess.run(argv, cwd=target, check=True, env=env, capture_output=True)
    return target


def make_venv(target: Path) -> Path:
    """A virtualenv that sees this environment's packages (a .pth line), with its own pip."""
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, capture_output=True)
    purelib = sysconfig.get_paths()["purelib"]
    site = subprocess.run([str(target / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "_readme_parent.pth").write_text(purelib + "\n")
    return target


def environment(venv: Path, home: Path) -> dict:
    return {**os.environ, **GIT_ENV, "HOME": str(home),
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "VIRTUAL_ENV": str(venv),
            "PATH": f"{venv / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
                    f"{os.environ.get('PATH', '')}"}


def run_command(command: Command, cwd: Path, env: dict, timeout: float = 900):
    return subprocess.run(["bash", "-c", command.text], cwd=cwd, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)


def main(argv: list[str]) -> int:
    import tempfile
    readme = Path(argv[0]) if argv else ROOT / "README.md"
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp) / "project")
        env = environment(make_venv(Path(tmp) / "venv"), Path(tmp))
        for block in parse(readme.read_text()):
            if block.skipped:
                print(f"## line {block.line}: not run ({block.skipped})")
                continue
            for command in block.commands:
                if command.text in RUN_ELSEWHERE:
                    continue
                result = run_command(command, project, env)
                print(f"$ {command.text}    # README line {command.line}, exit "
                      f"{result.returncode}")
                print(result.stdout, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

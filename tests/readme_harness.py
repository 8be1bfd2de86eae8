"""Run the README and the documentation pages as a user would: every code block, in order.

Blocks the harness reads:

- ```` ```console ````: lines starting with ``$ `` are commands; the lines after one, up to the
  next command, are its output. A line ``...`` stands for any number of lines; ``...`` inside a
  line for any text. Whitespace runs compare as one space. A command with no output shown is
  only required to succeed.
- ```` ```bash ````: every line is a command (``\\`` continues a line; comments are dropped);
  each must succeed, its output is not compared.
- ```` ```pycon ````: a Python session (``>>>`` and ``...`` prompts), checked by doctest
  (ELLIPSIS, NORMALIZE_WHITESPACE) with the project as the working directory.
- ```` ```python ````: a script; it must run to the end.
- ```` ```yaml ````: a file's content; it must parse.
- A block preceded by ``<!-- not run (reason) -->`` is skipped; the reason is reported. Other
  blocks (``text``, no language) are shown as they are.

Where they run: a project (a copy of the repository's files, committed to a fresh git repository)
with a virtualenv of its own on PATH (layered over the test's environment, so ``pip install -e .``
installs that copy without downloading the dependencies again), COLUMNS=120, and its own git
identity. The Quickstart's first command (``QUICKSTART``) runs once in it; every document then
starts from a copy of that project, and the commands of a sequence (the README; the tutorial's
pages in the site's order; any other page) run one after the other, each building on the last.

    python tests/readme_harness.py [FILE.md ...]     # print what each command prints, and\n                                                     # mark what differs from the page
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import dvc_server

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"<!--\s*(?:readme:\s*)?not run\s*\((.*?)\)\s*-->\s*$")
RUN = ("console", "bash", "pycon", "python", "yaml")
GAP = "..."
GIT_ENV = {
    "GIT_AUTHOR_NAME": "readme tests", "GIT_AUTHOR_EMAIL": "readme@skillret.invalid",
    "GIT_COMMITTER_NAME": "readme tests", "GIT_COMMITTER_EMAIL": "readme@skillret.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "DVC_NO_ANALYTICS": "1", "COLUMNS": "120",
}
#: The README's first command: run once, in the project every document starts from.
QUICKSTART = 'pip install -e ".[example]" && dvc repro'
#: Commands the harness does not run inside a test, and where they do run instead.
RUN_ELSEWHERE = {QUICKSTART: "once, in the project every document starts from",
                 'pip install -e ".[test]" && pytest': ".ci/run (CI runs it on a clean clone)",
                 'pip install -e ".[docs]" && mkdocs build --strict':
                     "tests/docs/test_site.py (into a temporary folder)"}


@dataclass
class Command:
    text: str
    line: int                      # the document's line of the command
    expected: list[str] | None     # None: output not compared
    section: str
    lang: str = "console"


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
        if lang not in RUN:
            continue
        line = text.count("\n", 0, match.start()) + 1
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        block = Block(lang, line, section_at(text, match.start()))
        skip = SKIP.search(before)
        if skip:
            block.skipped = skip.group(1)
        lines = body.split("\n")[:-1]
        if lang in ("pycon", "python", "yaml"):
            block.commands.append(Command(body, line + 1, None, block.section, lang))
        elif lang == "bash":
            joined = "\n".join(lines).replace("\\\n", " ")
            for n, raw in enumerate(joined.split("\n")):
                command = raw.split(" #")[0].strip() if not raw.lstrip().startswith("#") else ""
                if command:
                    block.commands.append(Command(" ".join(command.split()), line + 1 + n, None,
                                                  block.section, lang))
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
    """A virtualenv that sees this environment's packages (a .pth line), pip among them: its
    ``pip`` runs this environment's pip with the virtualenv's Python, so it installs into the
    virtualenv (made without ensurepip, which would install a pip of its own: seconds of CPU)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True,
                   capture_output=True)
    purelib = sysconfig.get_paths()["purelib"]
    site = subprocess.run([str(target / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "_readme_parent.pth").write_text(purelib + "\n")
    pip = target / "bin" / "pip"
    pip.write_text(f"#!{target / 'bin' / 'python'}\nimport sys\n"
                   "from pip._internal.cli.main import main\nsys.exit(main())\n")
    pip.chmod(0o755)
    return target


def environment(venv: Path, home: Path) -> dict:
    return {**os.environ, **GIT_ENV, "HOME": str(home),
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "VIRTUAL_ENV": str(venv),
            "PATH": f"{venv / 'bin'}{os.pathsep}" + dvc_server.path(
                f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")}


DOCTEST = ("import doctest, sys\n"
           "flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE\n"
           "failed, _ = doctest.testfile(sys.argv[1], module_relative=False, optionflags=flags)\n"
           "sys.exit(1 if failed else 0)\n")
YAML = "import sys, yaml; yaml.safe_load(sys.stdin)"


def run_command(command: Command, cwd: Path, env: dict, timeout: float = 900):
    """What a user typing (or pasting) the block would see: its output and exit status."""
    if command.lang == "console" or command.lang == "bash":
        argv, stdin = ["bash", "-c", command.text], None
    elif command.lang == "python":
        argv, stdin = ["python", "-"], command.text
    elif command.lang == "yaml":
        argv, stdin = ["python", "-c", YAML], command.text
    else:
        session = cwd / ".doctest-session.txt"
        session.write_text(textwrap.dedent(command.text))
        argv, stdin = ["python", "-c", DOCTEST, str(session)], None
    try:
        return subprocess.run(argv, cwd=cwd, env=env, text=True, input=stdin,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    finally:
        if command.lang == "pycon":
            (cwd / ".doctest-session.txt").unlink(missing_ok=True)


def failure(path: str, command: Command, result) -> str | None:
    """Why ``command`` did not do what its document says, or None."""
    where = f"{path} line {command.line} ({command.section})"
    if result.returncode != 0:
        return (f"{where}: `{command.text}` exited {result.returncode}:\n"
                f"{result.stdout[-3000:]}")
    if command.expected is not None and not output_matches(command.expected, result.stdout):
        return f"{where}: `{command.text}` printed:\n{result.stdout}"
    return None


def commands(documents: list[Path]):
    """(document, command) for every command the documents run, in order."""
    for document in documents:
        for block in parse(document.read_text()):
            if block.skipped:
                continue
            for command in block.commands:
                if command.text not in RUN_ELSEWHERE:
                    yield document, command


def run_documents(documents: list[Path], project: Path, env: dict) -> list[str]:
    """Every command of ``documents``, in order, in ``project``; the first failure stops."""
    for document, command in commands(documents):
        problem = failure(document.relative_to(ROOT).as_posix(), command,
                          run_command(command, project, env))
        if problem:
            return [problem]
    return []


def quickstart(base: Path) -> tuple[Path, dict]:
    """The project every document starts from, under ``base``: the repository's files, a
    virtualenv, and the Quickstart's first command run in it."""
    project, home = base / "project", base / "home"
    env = environment(base / "venv", home)
    if not (base / "ready").is_file():
        home.mkdir(parents=True, exist_ok=True)
        make_venv(base / "venv")
        make_project(project)
        result = subprocess.run(["bash", "-c", QUICKSTART], cwd=project, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
        assert result.returncode == 0, f"`{QUICKSTART}` exited {result.returncode}:\n" \
                                       f"{result.stdout[-3000:]}"
        (base / "ready").write_text("")
    return project, env


def copy_project(project: Path, target: Path) -> Path:
    shutil.copytree(project, target, symlinks=True)
    return target


def site_pages() -> dict[str, list[Path]]:
    """The site's pages in its navigation's order (mkdocs.yml), by the section they are in."""
    import yaml

    def walk(entry, section):
        if isinstance(entry, str):
            yield section, entry
        elif isinstance(entry, list):
            for item in entry:
                yield from walk(item, section)
        elif isinstance(entry, dict):
            for title, value in entry.items():
                yield from walk(value, title if isinstance(value, list) else section)

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    pages: dict[str, list[Path]] = {}
    for section, page in walk(nav, ""):
        pages.setdefault(section, []).append(DOCS / page)
    return pages


def sequences() -> dict[str, list[Path]]:
    """Documents whose commands run one after another in one project: the README; the
    tutorial, page after page; each other page that runs a command, alone."""
    sections = site_pages()
    tutorial = sections.pop("Tutorial")
    runs = {"README": [ROOT / "README.md"], "tutorial": tutorial}
    for page in (page for pages in sections.values() for page in pages):
        if any(True for _ in commands([page])):
            runs[page.relative_to(DOCS).as_posix()] = [page]
    return runs


def main(argv: list[str]) -> int:
    import tempfile
    documents = [Path(a).resolve() for a in argv] or [ROOT / "README.md"]
    with tempfile.TemporaryDirectory() as tmp:
        project, env = quickstart(Path(tmp))
        for document, command in commands(documents):
            result = run_command(command, project, env)
            print(f"$ {command.text}    # {document.name} line {command.line}, exit "
                  f"{result.returncode}")
            print(result.stdout, end="")
            if failure(document.name, command, result):
                print(f"## NOT AS SHOWN: {document.name} line {command.line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

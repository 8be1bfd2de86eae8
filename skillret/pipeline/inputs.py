"""Stage `inputs`: every file `params.yaml` names is there, or a stage of `dvc.yaml` makes it.

DVC would stop on a missing dependency with its own `[Errno 2]`; this stage runs first and names
the key to fix. DVC is imported only when a file is missing, its import being slow.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path, PurePath

from skillret.errors import ConfigError
from skillret.io.atomic import write_json
from skillret.pipeline import layout
from skillret.pipeline.comparable import count_of
from skillret.pipeline.params import load_yaml

#: the keys naming one file each, in the order they are reported (then `runs.<name>`)
FILE_KEYS = (("qrels", "path"), ("data", "skills"), ("data", "queries"))
SHOWN = 3       # missing files named in the one line; the others are counted
CLOSE = 0.82    # how alike (difflib's ratio) a name must be to be suggested for a missing one


def named_files(params: dict) -> list[tuple[str, str]]:
    """`(key, path)` of every file `params` names; a value that is not a path is left to the
    stage that reads it."""
    named = []
    for section, key in FILE_KEYS:
        values = params.get(section)
        named.append((f"{section}.{key}", values.get(key) if isinstance(values, dict) else None))
    runs = params.get("runs")
    if isinstance(runs, dict):
        named += [(f"runs.{name}", path) for name, path in runs.items()]
    return [(key, path) for key, path in named if isinstance(path, str) and path.strip()]


def stage_outputs(root: str | os.PathLike) -> frozenset[str]:
    """Absolute paths of every output DVC knows at `root` (stages and `.dvc` files); empty without
    DVC or a project."""
    try:
        from dvc.repo import Repo
    except ImportError:
        return frozenset()
    try:
        with Repo(os.fspath(root)) as repo:
            return frozenset(os.path.normpath(out.fs_path) for out in repo.index.outs)
    except Exception:  # noqa: BLE001 - not a DVC project, a dvc.yaml DVC itself rejects
        return frozenset()


def _absolute(root: Path, path: str) -> str:
    return os.path.normpath(os.path.join(root, path))


def _produced(target: str, outputs: frozenset[str]) -> bool:
    """`target` is an output, or inside an output that is a folder."""
    return target in outputs or any(target.startswith(out + os.sep) for out in outputs)


def suggestion(root: Path, path: str, outputs: frozenset[str] = frozenset()) -> str | None:
    """The closest existing (or to be made) path, part by part; None if a part has none close."""
    pure = PurePath(path)
    folder = pure.anchor or os.fspath(root)
    written = [pure.anchor] if pure.anchor else []
    for part in pure.parts[1 if pure.anchor else 0:]:
        names = {part}
        if part not in (".", ".."):  # the names in `folder`: on disk, and to be made there
            prefix = folder.rstrip(os.sep) + os.sep
            names = (set(os.listdir(folder)) if os.path.isdir(folder) else set()) | {
                out[len(prefix):].split(os.sep)[0] for out in outputs if out.startswith(prefix)}
        if part not in names:
            close = difflib.get_close_matches(part, sorted(names), n=1, cutoff=CLOSE)
            if not close:
                return None
            part = close[0]
        written.append(part)
        folder = os.path.join(folder, part)
    found = PurePath(*written).as_posix()
    target = _absolute(root, found)
    if found == pure.as_posix() or not (os.path.exists(target) or _produced(target, outputs)):
        return None
    return found


def check_inputs(params: dict, root: str | os.PathLike, source: str = "params.yaml",
                 outputs=stage_outputs) -> list[tuple[str, str, bool]]:
    """Check every file `params` names exists or is made by DVC (`outputs` asked only when one is
    missing); else one `ConfigError`. Returns `(key, path, present)` per file."""
    root = Path(root)
    named = named_files(params)
    absent = {key: path for key, path in named if not os.path.exists(_absolute(root, path))}
    made = frozenset(outputs(root)) if absent else frozenset()
    missing = [(key, path) for key, path in absent.items()
               if not _produced(_absolute(root, path), made)]
    if missing:
        problems = []
        for key, path in missing[:SHOWN]:
            close = suggestion(root, path, made)
            problems.append(f"{key}: {path} does not exist"
                            + (f" (did you mean {close}?)" if close else ""))
        more = len(missing) - SHOWN
        raise ConfigError(f"{source}: " + "; ".join(problems)
                          + (f"; and {count_of(more, 'more missing file')}" if more > 0 else ""))
    return [(key, path, key not in absent) for key, path in named]


def inputs_stage(params_path: str = layout.PARAMS) -> None:
    """Stage `inputs`: check the files, write `reports/inputs.json` (only `qrels.path`, so that
    registering a run leaves `normalize_qrels` unchanged)."""
    checked = check_inputs(load_yaml(params_path), Path.cwd(), os.fspath(params_path))
    qrels = next((path for key, path, _ in checked if key == "qrels.path"), None)
    write_json(layout.INPUTS, {"qrels": {"path": qrels}})
    later = [path for _, path, present in checked if not present]
    shown = ", ".join(later[:SHOWN]) + (", ..." if len(later) > SHOWN else "")
    print(f"{count_of(len(checked), 'input file')} named in {params_path}: "
          + (f"{len(checked) - len(later)} found, {len(later)} made by a stage ({shown})"
             if later else "all found"))

"""The pipeline's charts offline, via vl-convert-python (the `example` extra):
- `html_template`: DVC's plots page with Vega, Vega-Lite and vega-embed inlined (no CDN);
- `pipeline_charts`, `write_images`: the charts `dvc plots show` draws, as PNG or SVG.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from platformdirs import user_cache_dir

from skillret.errors import ConfigError, InputError
from skillret.io.atomic import OutputSet, atomic_path, write_text

VEGA_LITE_MAJOR = "5"  # the $schema of plots/templates
WORKSPACE = "workspace"  # DVC's name for the working tree's revision

_PAGE = """<!DOCTYPE html>
<html>
<head>
    <meta charset="utf-8">
    {refresh_tag}
    <title>DVC Plot</title>
    <!-- {versions}, inlined from vl-convert-python {package}
         by skillret-eval plots --html-template: this page needs no network. -->
    <script type="text/javascript">
(function () {
"use strict";
{bundle}
})();
    </script>
    <style>
        table {
            border-spacing: 15px;
        }
    </style>
</head>
<body>
    {plot_divs}
</body>
</html>
"""


def _vl_convert():
    try:
        import vl_convert  # the example extra's, imported only to draw
    except ImportError:
        raise ConfigError("vl-convert-python is not installed: it draws the charts "
                          "(pip install -e \".[example]\")") from None
    return vl_convert


def vega_lite_version() -> str:
    """The newest Vega-Lite of the templates' major version that vl-convert ships."""
    versions = _vl_convert().get_vegalite_versions()
    same_major = [v for v in versions if v.split(".")[0] == VEGA_LITE_MAJOR]
    key = (lambda v: tuple(int(p) for p in v.split(".") if p.isdigit()))
    return max(same_major or versions, key=key)


def html_template() -> str:
    """The page for `plots.html_template` in `.dvc/config`."""
    vl = _vl_convert()
    vl_version = vega_lite_version()
    bundle = cached_bundle(lambda: vl.javascript_bundle(vl_version=vl_version),
                           f"vl-convert-python-{version('vl-convert-python')}-"
                           f"vega-lite-{vl_version}")
    # "</script" would end the inline script and dvc-render substitutes its placeholders
    # anywhere ({scripts}, its CDN tags, left out of the page on purpose)
    for text in ("</script", "<!--", "{scripts}", "{plot_divs}", "{refresh_tag}"):
        if text in bundle:
            raise ConfigError(f"the JavaScript bundle of vl-convert-python contains {text!r}: "
                              f"it cannot be inlined in the plots page")
    versions = (f"vega {vl.get_vega_version()}, vega-lite {vl_version}, "
                f"vega-embed {vl.get_vega_embed_version()}")
    return (_PAGE.replace("{versions}", versions)
            .replace("{package}", version("vl-convert-python"))
            .replace("{bundle}", bundle.strip()))


def write_html_template(path: str | os.PathLike) -> Path:
    write_text(path, html_template())
    return Path(path)


def cached_bundle(build, key: str) -> str:
    """`build()`, cached as `vega-bundle-<key>.js` in `$SKILLRET_CACHE_DIR` or the user cache
    (shared by clones); an unwritable cache is no error."""
    folder = Path(os.environ.get("SKILLRET_CACHE_DIR") or user_cache_dir("skillret-eval"))
    path = folder / f"vega-bundle-{key}.js"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return path.read_text(encoding="utf-8")
    bundle = build()
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        write_text(path, bundle)
    return bundle


@dataclass(frozen=True)
class Chart:
    """`id`: plot file or top-level plot name; `name`: image file stem; `spec`: Vega-Lite."""

    id: str
    name: str
    spec: dict


def pipeline_charts(repo: str | os.PathLike = ".") -> list[Chart]:
    """The charts `dvc plots show` draws for `repo`, filled by DVC: stages' plots in dvc.yaml's
    order, then top-level ones."""
    from dvc.render.match import match_defs_renderers  # the pipeline extra
    from dvc.repo import Repo

    repo = Path(repo)
    dvc_yaml = repo / "dvc.yaml"
    if not dvc_yaml.is_file():
        raise InputError(dvc_yaml, "no such file", hint="--repo names the project's folder")
    log = logging.getLogger("dvc")
    level = log.level
    try:  # DVC's warnings and note on stderr repeat the errors raised below, on many lines
        log.setLevel(logging.CRITICAL)
        with contextlib.redirect_stderr(io.StringIO()), \
                Repo(str(repo), uninitialized=True) as project:
            data = project.plots.show()
            drawn = match_defs_renderers(data, templates_dir=project.plots.templates_dir)
    except Exception as exc:  # dvc.yaml or params.yaml DVC cannot read
        raise ConfigError(f"{dvc_yaml}: {exc}") from None
    finally:
        log.setLevel(level)
    definitions = data.get(WORKSPACE, {}).get("definitions", {})
    for failed in (definitions, *definitions.get("data", {}).values()):
        if "error" in failed:  # e.g. a ${name} params.yaml does not define
            raise ConfigError(f"{dvc_yaml}: {failed['error']}")
    top, files = set(), {}  # top-level plots; each plot's file (a top-level one's: its y's)
    for config, defined in definitions.get("data", {}).items():
        for name, props in defined.get("data", {}).items():
            y = (props or {}).get("y")
            files[name] = next(iter(y)) if isinstance(y, dict) else name
            if config:
                top.add(name)
    charts = []
    for item in sorted(drawn, key=lambda r: r.renderer.name in top):
        renderer = item.renderer
        file = files.get(renderer.name, renderer.name)
        errors = [*item.source_errors.get(WORKSPACE, {}).items(),
                  *((file, exc) for exc in item.definition_errors.values())]
        if errors:
            path, exc = errors[0]
            check_records(repo / path)  # its own error: missing, not UTF-8, not JSON, not records
            raise InputError(repo / path, f"cannot be drawn ({exc})")
        spec = renderer.get_filled_template()
        if not spec:
            raise InputError(repo / file, "holds no records to draw", hint="run dvc repro")
        charts.append(Chart(renderer.name, image_name(renderer.name), without_revision(spec)))
    names = [c.name for c in charts]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{dvc_yaml}: two charts would be written as {twice[0]!r}")
    return charts


def check_records(path: Path) -> None:
    """Raise InputError unless `path` is a CSV or TSV plot file or holds JSON records (a list, or
    an object holding one)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, "no such plot file", hint="run dvc repro") from None
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None
    if path.suffix.lower() in (".csv", ".tsv"):
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not valid JSON ({exc.msg})", line=exc.lineno) from None
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        data = lists[0] if len(lists) == 1 else None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InputError(path, "expected a list of records (objects) to plot")


def without_revision(spec):
    """`spec` without `rev` encodings (one revision: a legend saying only 'workspace')."""
    def drop(obj: dict) -> dict:
        if isinstance(obj.get("encoding"), dict):
            obj["encoding"] = {channel: enc for channel, enc in obj["encoding"].items()
                               if not (isinstance(enc, dict) and enc.get("field") == "rev")}
        return obj

    return json.loads(json.dumps(spec), object_hook=drop)


def image_name(plot_id: str) -> str:
    """Image stem: `plots/runs/bm25.json` -> `runs-bm25`, `NDCG@K, every run` ->
    `NDCG-K-every-run`."""
    stem = re.sub(r"\.(json|csv|tsv|ya?ml)$", "", plot_id, flags=re.IGNORECASE)
    stem = re.sub(r"^plots/", "", stem)
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "chart"


def write_images(repo: str | os.PathLike, output_dir: str | os.PathLike, fmt: str,
                 scale: float = 2.0) -> list[Path]:
    """Every chart as `<output_dir>/<name>.<fmt>` (a PNG at `scale` pixels per CSS pixel): all
    written, or none on an error."""
    charts = pipeline_charts(repo)
    vl, vl_version = _vl_convert(), vega_lite_version()
    images = [(Path(output_dir) / f"{chart.name}.{fmt}",
               vl.vegalite_to_png(chart.spec, vl_version=vl_version, scale=scale) if fmt == "png"
               else vl.vegalite_to_svg(chart.spec, vl_version=vl_version).encode("utf-8"))
              for chart in charts]
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    with OutputSet():
        for path, data in images:
            with atomic_path(path) as tmp:
                tmp.write_bytes(data)
    return [path for path, _ in images]

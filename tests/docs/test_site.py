"""The documentation site builds with ``mkdocs build --strict`` (every link and anchor resolves)
and reads offline: no font, script or stylesheet from another host, and headless Chromium with
every connection refused draws the home page, a tutorial page and the measures reference styled,
and finds a word with the site's search."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pixels  # noqa: E402
import sample_pipeline as sample  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("index.html", "tutorial/register.html", "reference/measures.html")
pytestmark = pytest.mark.pipeline


def needed(what: str, found, install: str):
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing under CI ({install})")
    pytest.skip(f"needs {what} ({install})")


@pytest.fixture(scope="session")
def site(shared_dir) -> Path:
    """The site, built once for the session (every pytest-xdist worker reads the same one)."""
    needed("mkdocs", shutil.which("mkdocs") or _importable("mkdocs"), 'pip install -e ".[docs]"')
    return sample.once(shared_dir / "docs-site", build_site)


def build_site(out: Path) -> Path:
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                             "-d", str(out)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_every_page_is_built_and_nothing_comes_from_another_host(site):
    nav = [p for p in (ROOT / "docs").rglob("*.md")]
    for page in nav:
        assert (site / page.relative_to(ROOT / "docs").with_suffix(".html")).is_file(), page
    remote = re.compile(r"""<(?:script|link|img)\b[^>]*\b(?:src|href)=["']?(?:https?:)?//""")
    for html in site.rglob("*.html"):
        text = html.read_text()
        assert not remote.search(text), (html, remote.search(text).group(0))
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, html


def test_the_reference_is_written_from_the_code(site):
    from skillret.cli import COMMANDS
    from skillret.measures import registry

    measures = (site / "reference" / "measures.html").read_text()
    for measure in registry.all_measures():
        assert f'id="{measure.name.lower()}"' in measures, measure.name
    cli = (site / "reference" / "cli.html").read_text()
    for command in COMMANDS:
        assert f"usage: skillret-eval {command}" in cli, command
    api = (site / "reference" / "api.html").read_text()
    assert "skillret.evaluate" in api and "skillret.Run" in api


def browser() -> str:
    return needed("Chromium", next(filter(None, map(shutil.which, ("chromium",
                                                                     "chromium-browser"))), None),
                  "apt-get install chromium")


def chromium(url: str, *args: str, height: int = 1200) -> subprocess.CompletedProcess:
    """Headless Chromium with every connection refused (a dead proxy, no name resolves)."""
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu",
                               "--no-first-run", "--disable-background-networking",
                               "--disable-component-update", "--disable-sync",
                               "--disable-dev-shm-usage", f"--user-data-dir={profile}",
                               "--proxy-server=127.0.0.1:9",
                               "--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars",
                               "--virtual-time-budget=10000", f"--window-size=1280,{height}",
                               *args, url], capture_output=True, text=True, timeout=120)


def screenshot(page: Path, out: Path) -> Path:
    """A screenshot of ``page``; taken again once when it comes out blank (on a loaded machine
    Chromium may capture before the first paint)."""
    for _ in range(2):
        out.unlink(missing_ok=True)
        chromium(page.as_uri(), f"--screenshot={out}")
        assert out.is_file(), f"Chromium wrote no screenshot of {page}"
        if pixels.drawn(out)[0]:
            break
    return out


@pytest.mark.parametrize("page", PAGES)
def test_pages_draw_styled_offline(site, page, tmp_path):
    """The header bar is the theme's colour (its stylesheet loaded), and the page has text."""
    import numpy as np

    shot = screenshot(site / page, tmp_path / "page.png")
    width, height, step, rows = pixels.rows(shot.read_bytes())
    image = rows.reshape(height, width, step)[..., :3].astype(int)
    header = image[10:40, width // 2:].reshape(-1, 3)
    indigo = (header[:, 2] > header[:, 0] + 60) & (header[:, 2] > 150)
    assert indigo.mean() > 0.5, "no theme colour in the header: the stylesheet did not load"
    drawn, total = pixels.drawn(shot)
    assert drawn / total > 0.03, "the page is nearly blank"
    if os.environ.get("SKILLRET_DOCS_SCREENSHOTS"):       # keep them, to look at
        keep = Path(os.environ["SKILLRET_DOCS_SCREENSHOTS"])
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, keep / (page.replace("/", "-").replace(".html", ".png")))
    assert np.any(image < 100), "no dark text"


def test_search_works_offline(site):
    """`?q=WORD` opens the search with WORD; its results come from the site's own index."""
    result = chromium((site / "index.html").as_uri() + "?q=completeness", "--dump-dom")
    assert "md-search-result__item" in result.stdout, result.stdout[-2000:]
    assert "Completeness" in result.stdout

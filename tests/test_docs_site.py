"""The documentation site builds with `mkdocs build --strict`: a broken link, a missing
anchor, or a page of docs/ left out of the nav in mkdocs.yml fails the test suite (and so
CI). mkdocs and the Material theme come with the `test` extra (and the `docs` extra)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import yaml

from .conftest import ROOT

CONFIG = os.path.join(ROOT, "mkdocs.yml")


def build(config: str, site: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", config,
                           "--site-dir", site], capture_output=True, text=True, env=env, timeout=300)


def test_mkdocs_and_the_material_theme_are_installed():
    import material  # noqa: F401  (mkdocs-material: pip install -e '.[test]')
    import mkdocs  # noqa: F401


def test_the_site_builds_in_strict_mode(tmp_path):
    proc = build(CONFIG, str(tmp_path / "site"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for page in ("index.html", "tutorial/index.html", "cookbook/index.html", "language/index.html",
                 "games/crazy_eights/index.html"):
        assert (tmp_path / "site" / page).exists(), page


def _nav_pages(nav) -> list[str]:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_the_nav_lists_every_page_of_docs():
    with open(CONFIG, encoding="utf-8") as fh:
        config = yaml.load(fh, Loader=yaml.BaseLoader)      # plain data; the theme's tags are not needed
    pages = sorted(os.path.relpath(os.path.join(d, f), os.path.join(ROOT, "docs")).replace(os.sep, "/")
                   for d, _, files in os.walk(os.path.join(ROOT, "docs")) for f in files if f.endswith(".md"))
    nav = _nav_pages(config["nav"])
    assert sorted(nav) == pages, {"missing from the nav": sorted(set(pages) - set(nav)),
                                  "in the nav but not in docs/": sorted(set(nav) - set(pages))}


def test_a_broken_link_fails_the_build(tmp_path):
    # Guard the guard: the same site with one broken link and one broken anchor must not build.
    docs = tmp_path / "docs"
    shutil.copytree(os.path.join(ROOT, "docs"), docs)
    config = tmp_path / "mkdocs.yml"
    shutil.copy(CONFIG, config)
    with open(docs / "index.md", "a", encoding="utf-8") as fh:
        fh.write("\nSee [a page that does not exist](no_such_page.md).\n")
    assert build(str(config), str(tmp_path / "site")).returncode != 0
    shutil.copy(os.path.join(ROOT, "docs", "index.md"), docs / "index.md")
    with open(docs / "index.md", "a", encoding="utf-8") as fh:
        fh.write("\nSee [a missing section](tutorial.md#no-such-section).\n")
    assert build(str(config), str(tmp_path / "site")).returncode != 0

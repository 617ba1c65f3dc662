"""Sphinx configuration of the course site (built by ``python -m tools.site.pages``).

The sources are staged by tools/site/pages.py, once per edition, into build/site-src/ (solutions)
and build/site-student-src/ (student edition): the home page and the executed notebooks of
``solutions/<assignment>/``, with titles, labelled folds and ``figures.json`` (captions and
alt texts from ``site/figures.toml``). This folder holds the configuration, the home page
text, the figure table, the static files and one template override. Nothing is executed here
(``nb_execution_mode = "off"``), and nothing is loaded from the network: MathJax 3 comes from
the ``sphinx-mathjax-offline`` wheel and is copied next to the pages, referenced relatively.

``_templates/search-button-field.html`` replaces the theme's search button, whose
``aria-label="Search"`` left out its visible "Ctrl+K" (axe: label-content-name-mismatch).
``tools.site.pages.sphinx_setup`` adds the ``td-fold`` directive and draws every fold, written or
code, as one native ``<details>``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tools.site.pages import MATHJAX_FILE, mathjax_dir, sphinx_setup  # tools is installed editable

project = "td-course"
author = "td-course"
copyright = "2026, td-course"
language = "en"

extensions = ["myst_nb"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "pages.json", "figures.json"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["td-site.css"]

# Notebooks: render their saved outputs, never execute.
nb_execution_mode = "off"
nb_merge_streams = True
nb_output_stderr = "show"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
myst_dmath_double_inline = True  # a "$$…$$" left inside a sentence
suppress_warnings = ["myst.header", "mystnb.unknown_mime_type"]

# Math: MathJax 3 (SVG output: one file, no web fonts) from the package, copied into
# _static/mathjax/ and referenced relatively, so a copied folder of pages still renders.
mathjax_path = f"mathjax/{MATHJAX_FILE}"
mathjax3_config = {
    "tex": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
            "processEscapes": True, "tags": "ams"},
    "svg": {"fontCache": "global"},
    "options": {"ignoreHtmlClass": "tex2jax_ignore|mathjax_ignore|document",
                "processHtmlClass": "tex2jax_process|mathjax_process|math|output_area"},
}

html_theme = "sphinx_book_theme"
html_title = "td-course"
html_last_updated_fmt = None
html_show_sourcelink = False
html_copy_source = False
html_context = {"default_mode": "light"}
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "navigation_with_keys": False,
    "show_navbar_depth": 1,
    "toc_title": "On this page",
    "extra_footer": "",
}
html_sidebars = {"**": ["navbar-logo.html", "sbt-sidebar-nav.html"]}


def _copy_mathjax(app, exc):
    if exc is None and app.builder.format == "html":
        dest = Path(app.outdir) / "_static" / "mathjax"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(mathjax_dir() / MATHJAX_FILE, dest / MATHJAX_FILE)


def setup(app):
    app.connect("build-finished", _copy_mathjax)
    sphinx_setup(app)

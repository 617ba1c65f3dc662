"""Student-provided HTML made inert in every page an instructor (or anyone) opens.

A submission is HTML in three places: its markdown answers (markdown allows raw HTML), its
rich outputs (``text/html``, ``text/markdown``, ``image/svg+xml``, ``application/javascript``,
widget views) and the metadata nbconvert's templates copy into attributes (an image's
``width``, written unquoted). nbconvert renders all of them as they are unless told otherwise,
and the feedback pages (``nbgrader generate_feedback``) and the Formgrader's views are rendered
by nbconvert on the instructor's origin. Here, with nh3 (the Python binding of the Rust
sanitizer *ammonia*):

- :func:`clean_html`: an allowlist sanitizer for a fragment of HTML: text, headings, lists,
  tables, code (Pygments' ``class`` spans), links (http, https, mailto, in-page), images as
  ``data:`` URIs only (nothing is fetched when the page opens), a few layout-only ``style``
  properties (none that takes a URL); no script, event handler, ``javascript:`` URL, iframe,
  object, embed, form, ``<style>``, SVG or MathML element. Ids get a prefix (no clobbering of
  the page's own names). Maths stays text (``$...$``) for MathJax to typeset, or, on a
  feedback page, for :func:`tools.site.feedback_page.typeset` to write as MathML after this cleaning
  (its MathML has an allowlist of its own; a submission's own MathML never gets through here).
- nbconvert filters (``course/nbgrader_config.py`` registers :data:`FILTERS` on the
  ``HTMLExporter``, so ``generate_feedback`` and the Formgrader both use them, whatever their
  template): ``markdown2html`` renders markdown as nbconvert does and cleans the result (the
  feedback and formgrade templates of nbgrader render markdown cells without nbconvert's
  ``sanitize_html`` path), ``clean_html`` is :func:`clean_html` (nbconvert's
  ``sanitize_html = True`` pipes rich outputs through it), ``get_metadata`` keeps only numeric
  image sizes, ``td_csp`` is the Content-Security-Policy of a feedback page (the course's
  template puts it in a ``<meta>``; the page has no script of its own: none runs).
- :class:`SanitizeStudentHTML`: the same on the notebook itself, last in
  ``GenerateFeedback.preprocessors`` (after the hidden tests are scrubbed: escaping first
  would hide a hidden-test line from the scrubber): rich outputs cleaned, script-only mime
  types dropped, metadata reduced to what rendering needs, raw cells cleaned.
"""

from __future__ import annotations

import base64
import hashlib
import re

import nh3
from jinja2 import pass_context
from nbconvert.filters import get_metadata as _get_metadata
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool
from traitlets.config import Configurable

ID_PREFIX = "student-"
TAGS = (set(nh3.ALLOWED_TAGS) - {"area", "map"}) | {"tfoot"}
_CELL = {"align", "colspan", "rowspan", "scope", "headers", "style"}
ATTRIBUTES: dict[str, set[str]] = {
    "*": {"class", "title", "lang", "dir"},
    "a": {"href", "hreflang"},
    "img": {"src", "alt", "width", "height"},
    **{f"h{i}": {"id"} for i in range(1, 7)},
    "table": {"border", "summary", "style"},
    "th": _CELL, "td": _CELL,
    **{t: {"align", "style"} for t in ("tr", "thead", "tbody", "tfoot")},
    "col": {"span", "style"}, "colgroup": {"span", "style"},
    "ol": {"start", "type"},
    **{t: {"style"} for t in ("p", "div", "span", "pre", "code", "caption")},
    "time": {"datetime"}, "data": {"value"}, "details": {"open"},
}
#: style properties kept (layout and colour; none of them takes a URL, so none can fetch)
STYLE_PROPERTIES = {
    "text-align", "vertical-align", "color", "background-color", "font-weight", "font-style",
    "text-decoration", "white-space", "width", "min-width", "max-width", "height", "padding",
    "padding-left", "padding-right", "padding-top", "padding-bottom", "margin", "margin-left",
    "margin-right", "margin-top", "margin-bottom", "border", "border-collapse", "border-spacing",
    "border-color", "border-width", "border-style",
}
URL_SCHEMES = {"http", "https", "mailto", "data"}
DATA_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=\s]*\Z", re.I)
DIMENSION = re.compile(r"\s*\d+(?:\.\d+)?(?:px|%)?\s*\Z")
_SCHEME = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.\-]*:")


def _attribute(tag: str, attr: str, value: str) -> str | None:
    """ammonia's per-attribute hook (after its own scheme check): images only as ``data:``
    URIs, links absolute (http, https, mailto) or in-page, sizes numeric."""
    if attr in ("href", "src"):
        v = value.strip()
        if tag == "img" and attr == "src":
            return v if DATA_IMAGE.match(v) else None
        if v.startswith("#"):
            return v if v[1:].startswith(ID_PREFIX) else "#" + ID_PREFIX + v[1:]
        if not _SCHEME.match(v) or v.lower().startswith("data:"):
            return None  # a relative URL points into the instructor's server; data: is for images
        return v
    if attr in ("width", "height"):
        return value if DIMENSION.match(value) else None
    return value


_CLEANER = nh3.Cleaner(tags=TAGS, attributes=ATTRIBUTES, attribute_filter=_attribute, url_schemes=URL_SCHEMES,
                       filter_style_properties=STYLE_PROPERTIES, id_prefix=ID_PREFIX, strip_comments=True,
                       link_rel="noopener noreferrer")


def clean_html(html) -> str:
    """``html`` (a fragment; str, bytes or Markup) with only inert HTML left (see the module)."""
    if isinstance(html, bytes):
        html = html.decode("utf-8", "replace")
    return _CLEANER.clean(str(html))


# ------------------------------------------------------------------------ nbconvert filters
class CleanMarkdown(Configurable):
    """The ``markdown2html`` filter, cleaned: nbconvert's own rendering (the exporter's, with
    cell attachments and heading anchors, when registered on an ``HTMLExporter``), then
    :func:`clean_html`."""

    jinja_pass_arg = pass_context(lambda: None).jinja_pass_arg  # called as (context, source)

    def __call__(self, context, source) -> str:
        render = getattr(self.parent, "markdown2html", None)
        if render is not None:
            html = render(context, source)
        else:
            from nbconvert.filters.markdown_mistune import markdown2html_mistune

            html = markdown2html_mistune(source)
        return clean_html(html)


def get_metadata(output, key, mimetype=None):
    """nbconvert's ``get_metadata``; an image's width or height only if it is a number (the
    templates write them into an unquoted attribute)."""
    value = _get_metadata(output, key, mimetype)
    if key in ("width", "height") and value is not None and not DIMENSION.match(str(value)):
        return None
    return value


_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def script_csp(trusted_html) -> str:
    """The Content-Security-Policy of a page whose only scripts are the ``<script>`` elements
    of ``trusted_html`` (the page's own, e.g. MathJax): those run (by hash), nothing else
    does (no other script, event handler or ``javascript:`` URL); nothing is fetched but
    ``data:`` images and fonts; styles inline (MathJax inserts its own)."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode() + "'"
        for body in _SCRIPT.findall(str(trusted_html)))
    return ("default-src 'none'; script-src " + (hashes or "'none'") + "; style-src 'unsafe-inline'; "
            "img-src data:; font-src data:; base-uri 'none'; form-action 'none'")


#: ``c.HTMLExporter.filters`` entries (course/nbgrader_config.py)
FILTERS = {
    "markdown2html": "tools.site.sanitize.CleanMarkdown",
    "clean_html": "tools.site.sanitize.clean_html",
    "get_metadata": "tools.site.sanitize.get_metadata",
    "td_csp": "tools.site.sanitize.script_csp",
}


# ------------------------------------------------------------------------ the notebook
#: rich output types kept (the rest can only be scripts or widgets: dropped)
KEPT_MIMETYPES = ("text/plain", "text/html", "text/markdown", "text/latex", "image/png", "image/jpeg",
                  "image/gif", "image/svg+xml")
DROPPED_NOTE = "[output of type {types} not shown: it can run code in the page]"
SAFE_ID = re.compile(r"[^A-Za-z0-9_.\-]")


def _clean_output(out) -> None:
    data = out.get("data")
    if not isinstance(data, dict):
        return
    dropped = sorted(m for m in data if m not in KEPT_MIMETYPES)
    for mime in dropped:
        del data[mime]
    for mime in ("text/html", "text/markdown"):
        if mime in data:
            value = data[mime]
            value = "".join(value) if isinstance(value, list) else str(value)
            if mime == "text/markdown":
                from nbconvert.filters.markdown_mistune import markdown2html_mistune

                del data[mime]
                if "text/html" in data:
                    continue
                value = markdown2html_mistune(value)
            data["text/html"] = clean_html(value)
    if dropped and not data:
        data["text/plain"] = DROPPED_NOTE.format(types=", ".join(dropped))
    meta = out.get("metadata")
    if isinstance(meta, dict):
        kept = {}
        for mime, m in meta.items():
            if mime in data and isinstance(m, dict):
                sizes = {k: v for k, v in m.items() if k in ("width", "height") and DIMENSION.match(str(v))}
                if m.get("unconfined") is True:
                    sizes["unconfined"] = True
                if sizes:
                    kept[mime] = sizes
        out["metadata"] = kept


class SanitizeStudentHTML(Preprocessor):
    """Clean a notebook before it is rendered to HTML for someone else (feedback): rich
    outputs through :func:`clean_html` (``text/markdown`` rendered first), script and widget
    outputs dropped (a note says so), output metadata reduced to numeric image sizes, raw cells
    cleaned, execution counts numbers, grade ids plain words, no widget state. Markdown cells
    are cleaned when they are rendered (the ``markdown2html`` filter of :data:`FILTERS`)."""

    enabled = Bool(True, help="Whether to clean the notebook.").tag(config=True)

    def preprocess(self, nb, resources):
        nb.metadata.pop("widgets", None)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "raw":
            cell.source = clean_html(cell.source)
        meta = cell.get("metadata", {}).get("nbgrader")
        if isinstance(meta, dict) and isinstance(meta.get("grade_id"), str):
            meta["grade_id"] = SAFE_ID.sub("_", meta["grade_id"])
        if cell.cell_type == "code":
            if not isinstance(cell.get("execution_count"), int):
                cell.execution_count = None
            for out in cell.get("outputs", []):
                if out.get("output_type") in ("display_data", "execute_result"):
                    _clean_output(out)
                if out.get("output_type") == "execute_result" and not isinstance(out.get("execution_count"), int):
                    out["execution_count"] = None
        return cell, resources

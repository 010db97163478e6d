"""The shell of every shared page: markup built safely, one stylesheet and script, a strict CSP.

A page is one file that works offline and from anywhere: its style and script are inline and
allowed by their sha256 hashes only, images only as ``data:`` URIs, nothing else loads. Markup
is built with ``el``, which escapes every ``str`` it is given; only ``Html`` (markup ``el``
made) passes unescaped, so untrusted text cannot become markup by omission.
"""

from __future__ import annotations

import base64
import hashlib
import html

_VOID = frozenset({"meta", "img", "br"})

CSS = """\
:root { color-scheme: light dark; --fg: #1f2328; --bg: #fff; --muted: #59636e;
  --line: #d1d9e0; --soft: #f6f8fa; --good: #1a7f37; --bad: #cf222e; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117;
  --muted: #9198a1; --line: #3d444d; --soft: #151b23; --good: #3fb950; --bad: #f85149;
  --accent: #4493f8; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1rem; color: var(--fg);
  background: var(--bg); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; } h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
.text, pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .25rem 0; }
pre { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; background: var(--soft);
  padding: .5rem; border-radius: 6px; }
.question { font-size: 1.1rem; font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
details.step { border: 1px solid var(--line); border-radius: 6px; margin: .5rem 0;
  padding: .25rem .75rem; }
details.step > summary { cursor: pointer; font-weight: 600; overflow-wrap: anywhere; }
.label { font-weight: 600; } .muted, .costs { color: var(--muted); font-size: .9rem; }
.error, .bad { color: var(--bad); } .good { color: var(--good); }
.answer { font-size: 1.1rem; border-left: 4px solid var(--good); padding-left: .75rem; }
.answer.none { border-color: var(--bad); }
.cards { display: flex; flex-wrap: wrap; gap: .75rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .9rem; }
.card b { display: block; font-size: 1.3rem; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(24rem, 1fr)); gap: 1rem; }
figure { margin: 0; } figure img { width: 100%; height: auto; background: #fff;
  border-radius: 6px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .5rem; text-align: left;
  vertical-align: top; overflow-wrap: break-word; }
th { white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
th button { font: inherit; font-weight: 600; background: none; border: 0; color: inherit;
  cursor: pointer; padding: 0; }
th[aria-sort=ascending] button::after { content: " ▲"; }
th[aria-sort=descending] button::after { content: " ▼"; }
.filters button, .tools button { font: inherit; border: 1px solid var(--line);
  background: var(--soft); color: inherit; border-radius: 6px; padding: .2rem .7rem;
  cursor: pointer; }
.filters button[aria-pressed=true] { border-color: var(--accent); color: var(--accent); }
a { color: var(--accent); }
.trajectory { display: none; border-top: 2px solid var(--line); margin-top: 1.5rem; }
.trajectory:target { display: block; }
@media (max-width: 40rem) { body { padding: .5rem; } th, td { padding: .25rem; } }
"""

SCRIPT = """\
"use strict";
(function () {
  var all = document.querySelectorAll.bind(document);
  all("button[data-expand]").forEach(function (button) {
    button.addEventListener("click", function () {
      var open = button.getAttribute("aria-pressed") !== "true";
      all("details.step").forEach(function (step) { step.open = open; });
      button.setAttribute("aria-pressed", String(open));
      button.textContent = open ? "Collapse all steps" : "Expand all steps";
    });
  });
  var table = document.getElementById("questions");
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var shown = document.getElementById("shown");
  all("button[data-filter]").forEach(function (button) {
    button.addEventListener("click", function () {
      var filter = button.getAttribute("data-filter");
      var count = 0;
      rows.forEach(function (row) {
        row.hidden = filter !== "all" && row.getAttribute("data-" + filter) !== "1";
        if (!row.hidden) { count += 1; }
      });
      all("button[data-filter]").forEach(function (other) {
        other.setAttribute("aria-pressed", String(other === button));
      });
      shown.textContent = count + " of " + rows.length + " questions";
    });
  });
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
    th.querySelector("button").addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (other) {
        other.removeAttribute("aria-sort");
      });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var numeric = th.classList.contains("num");
      rows.sort(function (x, y) {
        var a = x.cells[column].getAttribute("data-key");
        var b = y.cells[column].getAttribute("data-key");
        var order = numeric ? Number(a) - Number(b) : a.localeCompare(b);
        return up ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
})();
"""


def _hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


CSP = (
    f"default-src 'none'; style-src {_hash(CSS)}; script-src {_hash(SCRIPT)}; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


class Html(str):
    """Markup built here; any other ``str`` put into a page is escaped."""


def esc(text: str) -> str:
    """Text for an HTML text node or a quoted attribute value."""
    return text if isinstance(text, Html) else html.escape(text, quote=True)


Attr = str | int | bool | None


def el(tag: str, *children: str, **attrs: Attr) -> Html:
    """An element: ``class_`` → ``class``, ``data_key`` → ``data-key``; None/False omitted."""
    parts = [tag]
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        name = name.rstrip("_").replace("_", "-")
        parts.append(name if value is True else f'{name}="{esc(str(value))}"')
    opening = f"<{' '.join(parts)}>"
    if tag in _VOID:
        return Html(opening)
    return Html(opening + join(children) + f"</{tag}>")


def join(children: tuple[str, ...] | list[str]) -> Html:
    """Several children as one fragment (``str`` ones escaped)."""
    return Html("".join(esc(child) for child in children))


def data_uri(mime: str, content: str) -> str:
    """Content as a ``data:`` URI, the one kind of image the CSP allows."""
    return f"data:{mime};base64,{base64.b64encode(content.encode('utf-8')).decode('ascii')}"


def page(title: str, *body: str) -> str:
    """A whole self-contained document."""
    head = join(
        [
            el("meta", charset="utf-8"),
            el("meta", name="viewport", content="width=device-width, initial-scale=1"),
            el("meta", http_equiv="Content-Security-Policy", content=CSP),
            el("meta", name="referrer", content="no-referrer"),
            el("title", title),
            Html(f"<style>{CSS}</style>"),
        ]
    )
    script = Html(f"<script>{SCRIPT}</script>")
    document = el("html", el("head", head), el("body", *body, script), lang="en")
    return f"<!DOCTYPE html>\n{document}\n"

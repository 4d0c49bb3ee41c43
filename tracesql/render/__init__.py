"""Rendering of results into documents: HTML pages (html), SVG checked and rewritten (svg), charts drawn from a
Vega-Lite spec (chart).

Every name from a trace that reaches HTML, SVG or JSON inside a page goes through tracesql.escape here; no module
outside this package writes markup.
"""

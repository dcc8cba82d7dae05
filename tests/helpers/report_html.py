"""A grading report (``grading/report.html``) read as a browser reads it, for the tests:
its tables by id, the text of its paragraphs with an id, its scripts and its CSP."""

from __future__ import annotations

from html.parser import HTMLParser


class Page(HTMLParser):
    """A report as a browser reads it: each table by id (rows of cells: text, attributes,
    links), the text of each paragraph with an id, the scripts and the page's CSP."""

    def __init__(self, text: str):
        super().__init__()
        self.tables: dict[str, list[list[dict]]] = {}
        self.paragraphs: dict[str, dict] = {}
        self.scripts: list[str] = []
        self.policy = ""
        self._rows = self._cells = self._cell = self._paragraph = None
        self._in_script = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._rows = self.tables.setdefault(attrs.get("id", ""), [])
        elif tag == "tr" and self._rows is not None:
            self._cells = []
            self._rows.append(self._cells)
        elif tag in ("td", "th") and self._cells is not None:
            self._cell = {"text": "", "attrs": attrs, "links": []}
            self._cells.append(self._cell)
        elif tag == "a" and self._cell is not None:
            self._cell["links"].append((attrs["href"], ""))
        elif tag == "p" and "id" in attrs:
            self._paragraph = self.paragraphs.setdefault(attrs["id"], {"text": "", "attrs": attrs})
        elif tag == "script":
            self._in_script = True
            self.scripts.append("")
        elif tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy":
            self.policy = attrs["content"]

    def handle_endtag(self, tag):
        if tag == "table":
            self._rows = None
        elif tag in ("td", "th"):
            self._cell = None
        elif tag == "p":
            self._paragraph = None
        elif tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
        if self._cell is not None:
            self._cell["text"] += data
            if self._cell["links"] and not self._cell["links"][-1][1]:
                self._cell["links"][-1] = (self._cell["links"][-1][0], data)
        if self._paragraph is not None:
            self._paragraph["text"] += data

    def rows(self, table: str) -> list[list[str]]:
        """A table's rows below its header, each cell's text on one line."""
        return [[" ".join(cell["text"].split()) for cell in row] for row in self.tables[table][1:]]

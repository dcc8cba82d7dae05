"""What a translation may change of a notebook, left out: what remains must be the English's."""

from __future__ import annotations

import json


def all_but_markdown(notebook_json: str | bytes) -> str:
    """The notebook (its JSON) without its Markdown cells' sources and their checksums
    (a locked Markdown cell's is its translation's), as canonical JSON."""
    notebook = json.loads(notebook_json)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = ""
            cell["metadata"].get("nbgrader", {}).pop("checksum", None)
    return json.dumps(notebook, sort_keys=True)

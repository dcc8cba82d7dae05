"""JSON files the grader keeps beside the gradebook, written whole or not at all: a run
interrupted while writing one leaves the previous version, never half a file."""

from __future__ import annotations

import json
import os
from pathlib import Path


def write_json(path: Path, content: object) -> None:
    """Write ``content`` to ``path`` through a scratch file renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(".tmp")
    scratch.write_text(json.dumps(content, indent=1, sort_keys=True))
    os.replace(scratch, path)

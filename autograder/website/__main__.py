"""``python -m autograder.website --into FOLDER``: write the site's MyST project (every
lecture in every language) for ``make site`` to build with Jupyter Book."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.translation import build
from autograder.website import project

REPO = Path(__file__).resolve().parents[2]
LAB_URL = "http://localhost:8888/lab/tree/"  # where `make lab` serves the course by default


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.website", description=__doc__)
    parser.add_argument("--into", type=Path, required=True, help="the folder to write the project into")
    parser.add_argument("--lab-url", default=LAB_URL,
                        help="where a notebook opens in JupyterLab, its path in the course appended "
                             f"(default {LAB_URL}; a hub's, e.g. https://hub.example.edu/user-redirect/lab/tree/)")
    args = parser.parse_args(argv)
    lab_url = args.lab_url if args.lab_url.endswith("/") else args.lab_url + "/"
    try:
        written = project.lay_out(REPO, args.into, lab_url)
    except build.Untranslated as error:
        print(error, file=sys.stderr)
        return 1
    print(f"{len(written)} pages in {len(project.LANGUAGES)} languages written to {args.into}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

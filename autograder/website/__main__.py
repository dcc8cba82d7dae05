"""``python -m autograder.website``: ``project`` writes the site's MyST project (every lecture
in every language) for ``make site`` to build with Jupyter Book; ``publish`` then puts the
built site in its folder, each page of a translation marked with its language. Each
replaces only a folder it wrote itself."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.translation import build
from autograder.website import pages, project

REPO = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.website", description=__doc__)
    parser.add_argument("command", choices=["project", "publish"])
    parser.add_argument("--into", type=Path, required=True,
                        help="project: the folder to write the project into; publish: the site's folder")
    parser.add_argument("--built", type=Path, help="publish: the site as Jupyter Book built it")
    parser.add_argument("--language", choices=project.LANGUAGES, action="append",
                        help="a language of the site (repeatable; default: all, English first)")
    parser.add_argument("--lab-url", help="project: where a notebook opens in JupyterLab, its path in the course "
                                          "appended (e.g. http://localhost:8888/lab/tree/)")
    parser.add_argument("--theme", help="project: the folder, in the project's, where the site's theme is put")
    args = parser.parse_args(argv)
    languages = tuple(language for language in project.LANGUAGES if language in (args.language or project.LANGUAGES))
    try:
        if args.command == "publish":
            if not args.built:
                parser.error("publish needs --built")
            marked = project.publish(args.built, args.into, REPO, languages)
            print(f"the site is in {args.into} ({marked} pages marked with their language)")
            return 0
        if not args.lab_url or not args.theme:
            parser.error("project needs --lab-url and --theme")
        lab_url = args.lab_url if args.lab_url.endswith("/") else args.lab_url + "/"
        written = project.lay_out(REPO, args.into, lab_url, args.theme, languages)
    except (build.Untranslated, pages.PageError, project.FolderRefused) as error:
        print(error, file=sys.stderr)
        return 1
    print(f"{len(written)} pages in {len(languages)} language(s) written to {args.into}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

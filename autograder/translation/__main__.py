"""``python -m autograder.translation``: ``update`` merges the English documents into every
catalogue (``make translations``), ``status`` says how complete each is, ``check`` what is wrong
in their translations (``review``), ``build`` writes
one language's translated documents into a folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.translation import build, catalogues, glossary, review

REPO = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.translation", description=__doc__)
    parser.add_argument("command", choices=["update", "status", "check", "build"])
    parser.add_argument("--language", choices=sorted(catalogues.LANGUAGES), action="append",
                        help="a language (repeatable; default: all)")
    parser.add_argument("--into", type=Path, help="build: the folder to write the translated documents into")
    args = parser.parse_args(argv)
    languages = args.language or sorted(catalogues.LANGUAGES)
    if args.command == "build":
        if not args.into or len(languages) != 1:
            parser.error("build needs one --language and --into")
        for document in catalogues.documents(REPO):
            try:
                translated = build.translate_file(REPO / document, languages[0], REPO)
            except build.Untranslated as error:
                print(error, file=sys.stderr)
                return 1
            build.write_translation(translated, args.into / document)
        print(f"{len(catalogues.documents(REPO))} documents in {languages[0]} written to {args.into}")
        return 0
    if args.command == "check":
        return _check(languages)
    incomplete = 0
    print(f"{'language':<9}{'catalogue':<58}{'done':>6}{'fuzzy':>7}{'new':>6}")
    for language in languages:
        for document in catalogues.catalogued(REPO):
            if args.command == "update":
                counts = catalogues.update(REPO, language, document)
            else:
                path = catalogues.catalogue_path(REPO, language, document)
                counts = catalogues.counts(catalogues.read(path)) if path.exists() else catalogues.Counts(0, 0, -1)
            incomplete += not counts.complete
            print(f"{language:<9}{document.with_suffix('.po').as_posix():<58}{counts.translated:>6}"
                  f"{counts.fuzzy:>7}{counts.untranslated:>6}")
        if args.command == "update":  # the checks' messages, as the kernels read them
            checks = catalogues.read(catalogues.catalogue_path(REPO, language, catalogues.CHECKS))
            path = catalogues.compiled_path(REPO, language)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(catalogues.compiled(checks))
    if incomplete:
        print(f"{incomplete} catalogue(s) to finish: translate the new messages, check the fuzzy ones "
              "against the English and remove their fuzzy mark")
    return 1 if incomplete and args.command == "status" else 0


def _check(languages: list[str]) -> int:
    """Print every problem of every translated message; 1 if there is one."""
    faults = 0
    for language in languages:
        terms = glossary.read(catalogues.glossary_path(REPO, language))
        for document in catalogues.catalogued(REPO):
            path = catalogues.catalogue_path(REPO, language, document)
            for english, problem in review.problems(catalogues.read(path), terms) if path.exists() else []:
                faults += 1
                print(f"{path.relative_to(REPO)}: {problem}\n    in: {english[:120]!r}")
    print(f"{faults} problem(s)")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())

"""The site's own words, besides the lectures' (a link, a widget's note, the front page).

Each is English here, marked by ``_say`` so that ``make translations`` takes it into the
catalogue of this file (``translations/LANG/autograder/website/words.po``), translated like
any paragraph of the course and checked the same way (its ``{placeholders}`` kept).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from autograder.translation import build, catalogues


def _say(english: str) -> str:
    """A phrase for the catalogues: the extraction finds every call by this name."""
    return english


# each phrase with its link, so that each language places the hint as its punctuation wants:
# the first where a notebook opens in the student's own JupyterLab, the second on a hub
OPEN_IN_LAB = _say("[Open this notebook in JupyterLab]({address}) (after `make lab` in your copy of the course)")
OPEN_ON_HUB = _say("[Open this notebook in JupyterLab]({address})")
STATIC_WIDGET = _say("In JupyterLab this output follows its controls ({controls}); "
                     "here it is as the notebook was saved.")
LIVE_WIDGET = _say("In JupyterLab this cell shows a widget ({controls}), which works only there.")
FRONT_TITLE = _say("PyTorch in-place operations")
FRONT_LINE = _say("The course's lectures, with their figures and outputs.")
PHRASES = (OPEN_IN_LAB, OPEN_ON_HUB, STATIC_WIDGET, LIVE_WIDGET, FRONT_TITLE, FRONT_LINE)


def in_language(repo: Path, language: str) -> Callable[[str], str]:
    """The function that gives a phrase in ``language`` (English as it is): a phrase
    without a finished translation stops the build, named, as a lecture's paragraph would."""
    if language == "en":
        return str
    path = catalogues.catalogue_path(repo, language, catalogues.WEBSITE_WORDS)
    translations = catalogues.usable(catalogues.read(path)) if path.exists() else {}
    missing = [phrase for phrase in PHRASES if phrase not in translations]
    if missing:
        raise build.Untranslated(path, missing)
    return translations.__getitem__

"""Checks and grading machinery for the PyTorch in-place operations course."""

import sys

# jsonschema (which nbformat imports) compiles a grammar of RFC 3987 as it is imported,
# whenever rfc3987-syntax is installed (jupyterlab's dependencies bring it): a second and a
# half of every grading process's start, for IRI formats that no notebook schema checks.
# Without it, jsonschema leaves those formats unchecked.
sys.modules.setdefault("rfc3987_syntax", None)

"""nbgrader's check of each graded cell's metadata, with its schema checked once per process
(``autograder.nbgrader_api``), accepts and refuses what ``jsonschema.validate`` does."""

from __future__ import annotations

import jsonschema
import pytest
from nbformat.v4 import new_code_cell
from nbgrader.nbgraderformat import MetadataValidator

import autograder.nbgrader_api  # noqa: F401 (its import gives nbgrader the validator made once)

GOOD = {"grade": True, "grade_id": "test_add", "locked": True, "points": 2, "schema_version": 3, "solution": False}
BAD = [
    {**GOOD, "points": "two"},
    {**GOOD, "grade_id": 7},
    {**GOOD, "locked": "yes"},
]


def test_nbgraders_validator_checks_the_schema_once_and_each_cell_every_time(monkeypatch):
    validator = MetadataValidator()
    checked = []
    real_check = jsonschema.validators.Draft4Validator.check_schema
    monkeypatch.setattr(jsonschema.validators.Draft4Validator, "check_schema",
                        classmethod(lambda cls, schema: checked.append(schema) or real_check(schema)))
    validator.schema = {**validator.schema, "title": "a schema this process has not seen"}
    for _ in range(3):
        validator.validate_cell(new_code_cell(metadata={"nbgrader": dict(GOOD)}))
    assert len(checked) == 1
    with pytest.raises(jsonschema.ValidationError):
        validator.validate_cell(new_code_cell(metadata={"nbgrader": dict(BAD[0])}))


@pytest.mark.parametrize("metadata", BAD, ids=["points-a-string", "grade-id-a-number", "locked-a-string"])
def test_a_cell_is_refused_with_the_error_jsonschema_gives(metadata):
    validator = MetadataValidator()
    with pytest.raises(jsonschema.ValidationError) as plain:
        jsonschema.validate(metadata, validator.schema)
    with pytest.raises(jsonschema.ValidationError) as ours:
        validator.validate_cell(new_code_cell(metadata={"nbgrader": dict(metadata)}))
    assert (ours.value.message, list(ours.value.path)) == (plain.value.message, list(plain.value.path))

"""The records file on its own: what is saved comes back, and a save never leaves a torn file."""

from __future__ import annotations

import json

from autograder.results.records import Record, Records
from autograder.status import Status


def test_a_saved_record_comes_back_from_the_file(tmp_path):
    path = tmp_path / "grading" / "records.json"
    records = Records(path)
    records.save(Record("ada", "a01", Status.HELD, "read me", ["renamed"], ["cell 3: getattr"], 1.5, 7.0, 10.0, "f1"))
    records.save(Record("bob", "a01", Status.MISSING, "no notebook"))
    again = Records(path)
    assert again.get("ada", "a01") == records.get("ada", "a01")
    assert [record.key for record in again.all()] == ["ada/a01", "bob/a01"]
    assert again.get("eve", "a01") is None


def test_a_second_save_replaces_the_first_and_leaves_no_scratch_file(tmp_path):
    path = tmp_path / "records.json"
    records = Records(path)
    records.save(Record("ada", "a01", Status.FAILED, "first"))
    records.save(Record("ada", "a01", Status.GRADED, fingerprint="f2"))
    assert [row["status"] for row in json.loads(path.read_text())] == ["graded"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records.json"]

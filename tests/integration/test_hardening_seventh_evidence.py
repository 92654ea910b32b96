"""Issue 56, items 2 and 3 on SQLite and PostgreSQL: twenty approved versions of one
requirement certify nothing and relink links nothing on them; a decision file in a
registered lead's name, imported with no --reviewer and no key, records nothing, and one
a proven lead imports is the lead's decision. The scenes are the unit tests'
(`tests/unit/test_hardening_seventh_evidence.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_hardening_seventh_evidence import (
    attack_certifies_nothing,
    fresh,
    import_in_anothers_name,
)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return str(request.getfixturevalue("postgres_url"))


def test_twenty_approved_versions_of_one_requirement_certify_nothing(database: str) -> None:
    engine = fresh(database)
    try:
        attack_certifies_nothing(engine)
    finally:
        engine.dispose()


def test_a_decision_file_is_recorded_as_the_importers(tmp_path: Path, database: str) -> None:
    import_in_anothers_name(tmp_path, database)

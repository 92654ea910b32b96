"""Writes the JSON Schema files for every contract (`librarian schema export DIR`)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from librarian.schemas.envelopes import LinkProposal, ReviewItem
from librarian.schemas.evaluation import EvalReport, GoldenRow
from librarian.schemas.inputs import KnowledgeItem, QueueRow

CONTRACTS: dict[str, type[BaseModel]] = {
    "LinkProposal": LinkProposal,
    "ReviewItem": ReviewItem,
    "KnowledgeItem": KnowledgeItem,
    "QueueRow": QueueRow,
    "GoldenRow": GoldenRow,
    "EvalReport": EvalReport,
}

PACKAGED_SCHEMA_DIR = Path(__file__).resolve().parent / "json"


def schema_of(model: type[BaseModel]) -> dict[str, object]:
    schema = model.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"urn:librarian:schema:{model.__name__}"
    return schema


def export_schemas(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in CONTRACTS.items():
        path = out_dir / f"{name}.schema.json"
        path.write_text(json.dumps(schema_of(model), indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written

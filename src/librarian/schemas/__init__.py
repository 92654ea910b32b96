"""Pydantic v2 contracts: input rows, internal records, output envelopes."""

SCHEMA_VERSION = "0.1.0"

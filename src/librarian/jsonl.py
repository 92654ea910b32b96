"""Reading small JSON-lines files (links, review sheets, queue loads) object by object."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from librarian.errors import InputError
from librarian.text import value_problem


class JsonLineError(InputError):
    """A line is not a JSON object; `line` says which (1-based)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.reason = message


def json_objects(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; the first bad line raises."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JsonLineError(number, f"invalid JSON: {exc.msg}") from exc
        except RecursionError as exc:
            raise JsonLineError(number, "invalid JSON: nested too deeply") from exc
        except ValueError as exc:  # an integer of thousands of digits, say
            raise JsonLineError(number, f"invalid JSON: {str(exc)[:200]}") from exc
        if problem := value_problem(value):
            raise JsonLineError(number, problem.message)
        if not isinstance(value, dict):
            raise JsonLineError(number, f"expected a JSON object, got {type(value).__name__}")
        yield number, value

"""librarian: links security-knowledge sections to the OpenCRE hub graph, or routes them
to a person. `docs/architecture.md` maps the subpackages."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("librarian")
except PackageNotFoundError:  # pragma: no cover - running from a source tree, not installed
    __version__ = "0+unknown"

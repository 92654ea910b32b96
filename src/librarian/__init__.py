"""librarian: links security-knowledge sections to the OpenCRE hub graph, or routes them
to a person. `docs/architecture.md` maps the subpackages."""

# The one place the version is written: pyproject.toml reads it from here (setuptools'
# `attr:`), so `librarian --version` needs no importlib.metadata scan (40 ms).
__version__ = "0.1.0"

"""An Office Open XML package (a Word .docx, an Excel .xlsx) checked before a reader
parses any of it. Refused in one line: a password-protected file (an encrypted package
is an OLE container, not a zip, as is an old binary .doc or .xls), a damaged one, one
that carries macros (a `vbaProject.bin` part: a .docm, a .xlsm), one whose parts inflate
past MAX_PART_BYTES each or MAX_PACKAGE_BYTES together (a zip bomb: sizes checked as
declared and as actually inflated, a chunk at a time), one whose XML declares a DTD
(entities) in any part."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from librarian.pipeline.shapes.rows import Magic, PlainInputError

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# What an OOXML shape's file starts with: a zip, or an OLE container when it is protected
# (or an old binary file saved under the new name).
MAGIC = (
    Magic(b"PK\x03\x04", "a zip package, an Office document if it is one"),
    Magic(OLE_MAGIC, "an old binary Office file or a protected one"),
)
# Inflated size limits of a package's parts (docs/reliability.md).
MAX_PART_BYTES = 128 * 1024 * 1024
MAX_PACKAGE_BYTES = 512 * 1024 * 1024
INFLATE_CHUNK = 1024 * 1024
DOCTYPE = b"<!DOCTYPE"


@dataclass(frozen=True)
class Package:
    """A kind of package, as its refusals name it."""

    kind: str  # "Word document"
    suffix: str  # ".docx"
    save_plain: str  # how to save one without macros: "Word: File > Save As > Word Document"


def checked_package(path: Path, package: Package) -> dict[str, int]:
    """Each part's inflated size, or the one-line refusal of a file no reader may read."""
    with path.open("rb") as handle:
        head = handle.read(8)
    if head == OLE_MAGIC:
        raise PlainInputError(
            f"{path} is password-protected (or an old binary file): save a copy as a "
            f"{package.suffix} without a password"
        )
    try:
        with zipfile.ZipFile(path) as zipped:
            names = zipped.namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise PlainInputError(
            f"{path} is damaged: not a {package.kind} {package.suffix} package ({exc})"
        ) from exc
    sizes = _check_parts(path, package)
    if any(name.lower().endswith("vbaproject.bin") for name in names):
        raise PlainInputError(
            f"{path} carries macros: save it as a plain {package.suffix} ({package.save_plain}), "
            "which drops them"
        )
    return sizes


def _check_parts(path: Path, package: Package) -> dict[str, int]:
    """Each part's inflated size; a package refused whose XML declares a DTD anywhere, or
    whose parts inflate past the limits: each part streamed a chunk at a time, its
    declared and its actual inflated size counted (a zip entry may lie about its size)."""
    total = 0
    sizes: dict[str, int] = {}
    with zipfile.ZipFile(path) as zipped:
        infos = zipped.infolist()
        declared = sum(info.file_size for info in infos)
        if declared > MAX_PACKAGE_BYTES or any(i.file_size > MAX_PART_BYTES for i in infos):
            raise too_big(path, max(declared, *(i.file_size for i in infos)), package)
        for info in infos:
            sizes[info.filename] = _scan_part(path, zipped, info.filename, total, package)
            total += sizes[info.filename]
    return sizes


def _scan_part(
    path: Path, zipped: zipfile.ZipFile, name: str, before: int, package: Package
) -> int:
    """The part's inflated size, read a chunk at a time; a size past the limits refused on
    the way, and a DTD in a part named as XML (a reader's parser refuses one in any part
    it reads)."""
    size, tail = 0, b""
    xml = name.lower().endswith((".xml", ".rels"))
    try:
        with zipped.open(name) as part:
            while chunk := part.read(INFLATE_CHUNK):
                size += len(chunk)
                if size > MAX_PART_BYTES or before + size > MAX_PACKAGE_BYTES:
                    raise too_big(path, before + size, package)
                if xml and DOCTYPE in (tail + chunk).upper():
                    raise declares_dtd(path, name, package)
                tail = chunk[-len(DOCTYPE) :]
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise PlainInputError(
            f"{path} is damaged: its part {name} does not inflate ({exc})"
        ) from exc
    return size


def declares_dtd(path: Path, part: str, package: Package) -> PlainInputError:
    return PlainInputError(
        f"{path} is damaged: its part {part} declares a DTD (entities), which no "
        f"{package.kind} does; save a copy from the program that made it"
    )


def too_big(path: Path, size: int, package: Package) -> PlainInputError:
    return PlainInputError(
        f"{path} inflates past what a {package.kind} holds ({size / 2**20:.0f} MiB or more; "
        f"the limits are {MAX_PART_BYTES // 2**20} MiB a part and "
        f"{MAX_PACKAGE_BYTES // 2**20} MiB in all): a zip bomb, or not a document"
    )

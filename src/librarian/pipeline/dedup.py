"""C.1 dedup: a chunk, or a span with the same text, read twice in one run is decided once."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field

from librarian.pipeline.ingest import Parsed
from librarian.schemas.records import RejectCode, Section, Skip, SkipCode, rejected


@dataclass
class ChunkRegistry:
    """Chunks seen in this run, so a repeated chunk is processed once, and a span seen with
    the same text under another chunk id too: the first in input order is decided,
    whatever the batch size. It grows with the run (every chunk id it saw): a run keeps
    it on disk (`DiskSpill.mapping`), not in memory."""

    seen: MutableMapping[str, str] = field(default_factory=dict)  # chunk -> content hash
    spans: MutableMapping[str, str] = field(default_factory=dict)  # span + hash -> chunk

    def admit(self, parsed: Parsed) -> Parsed:
        if not isinstance(parsed, Section):
            return parsed
        line, chunk = parsed.line, parsed.chunk_id
        prior = self.seen.get(chunk)
        if prior is None:
            first = self.spans.setdefault(f"{parsed.span_key}\x00{parsed.content_hash}", chunk)
            if first != chunk:
                why = f"span and text already read under chunk {first} earlier in this run"
                return Skip(line=line, chunk_id=chunk, reason=SkipCode.DUPLICATE_CHUNK, message=why)
            self.seen[chunk] = parsed.content_hash
            return parsed
        if prior == parsed.content_hash:
            why = f"chunk {chunk} already read earlier in this run"
            return Skip(line=line, chunk_id=chunk, reason=SkipCode.DUPLICATE_CHUNK, message=why)
        why = f"chunk {chunk} appeared earlier in this run with different text; the first one"
        why += " was processed"
        return rejected(line, RejectCode.DUPLICATE_CHUNK_CONFLICT, why, chunk, "chunk_id")

"""C.1 dedup: a chunk, or a span with the same text, read twice in one run is decided once."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field

from librarian.pipeline.ingest import Parsed
from librarian.schemas.records import RejectCode, Section, Skip, SkipCode, rejected
from librarian.text import quoted


@dataclass
class ChunkRegistry:
    """Chunks seen in this run, so a repeated chunk is processed once, and a span seen with
    the same text under another chunk id too: the first in input order is decided,
    whatever the batch size. It grows with the run (every chunk id it saw): a run keeps
    it on disk (`DiskSpill.mapping`), not in memory."""

    # chunk -> its content hash, a space and its first words (what a conflict quotes)
    seen: MutableMapping[str, str] = field(default_factory=dict)
    spans: MutableMapping[str, str] = field(default_factory=dict)  # span + hash -> chunk

    def admit(self, parsed: Parsed) -> Parsed:
        if not isinstance(parsed, Section):
            return parsed
        line, chunk, words = parsed.line, parsed.chunk_id, quoted(parsed.text)
        prior = self.seen.get(chunk)
        if prior is None:
            first = self.spans.setdefault(f"{parsed.span_key}\x00{parsed.content_hash}", chunk)
            if first != chunk:
                why = f"span and text {words} already read under chunk {first} earlier in this run"
                return Skip(line=line, chunk_id=chunk, reason=SkipCode.DUPLICATE_CHUNK, message=why)
            self.seen[chunk] = f"{parsed.content_hash} {words}"
            return parsed
        prior_hash, _, prior_words = prior.partition(" ")
        if prior_hash == parsed.content_hash:
            why = f"chunk {chunk} {words} already read earlier in this run"
            return Skip(line=line, chunk_id=chunk, reason=SkipCode.DUPLICATE_CHUNK, message=why)
        why = (
            f"chunk {chunk} appeared earlier in this run with different text: {prior_words} "
            f"was processed, this one, {words}, was not (two items under one id: give "
            "each its own)"
        )
        return rejected(line, RejectCode.DUPLICATE_CHUNK_CONFLICT, why, chunk, "chunk_id")

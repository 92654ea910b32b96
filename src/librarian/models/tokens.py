"""The tokenizer a built embedder ships (`tokenizer.json`), for both built backends: each
text tokenized once, whether its length was counted first or not."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from librarian.models.seams import MAX_MODEL_CHARS


class CountingTokenizer:
    """Token ids cut to `max_tokens`; `truncated` counts whole texts and keeps their ids for
    the `ids` call that follows (the embed stage asks which texts are cut first)."""

    def __init__(self, path: Path, max_tokens: int) -> None:
        from tokenizers import Tokenizer

        self.max_tokens = max_tokens
        # The tokenizer file pads every text to 128 tokens; the encoders pad for themselves.
        self._cutting = Tokenizer.from_file(str(path))
        self._cutting.no_padding()
        self._cutting.enable_truncation(max_tokens)
        self._counter = Tokenizer.from_file(str(path))
        self._counter.no_padding()
        self._counter.no_truncation()
        self._counted: dict[str, list[int]] = {}

    def truncated(self, texts: Sequence[str]) -> list[int]:
        """Which texts the model would cut."""
        cut = [t[:MAX_MODEL_CHARS] for t in texts]
        encodings = self._counter.encode_batch(cut)
        self._counted = {text: e.ids for text, e in zip(cut, encodings, strict=True)}
        return [i for i, e in enumerate(encodings) if len(e.ids) > self.max_tokens]

    def ids(self, text: str) -> list[int]:
        """The ids the cutting tokenizer gives `text`: from the whole ids `truncated`
        counted (the first max_tokens - 1 and the closing marker), else tokenized now."""
        text = text[:MAX_MODEL_CHARS]
        whole = self._counted.pop(text, None)
        if whole is None:
            return list(self._cutting.encode(text).ids)
        if len(whole) <= self.max_tokens:
            return list(whole)
        return [*whole[: self.max_tokens - 1], whole[-1]]

"""What a source's cut is chosen from, kept so that a reader without models chooses it
again as the next relink would: the same function (`choose_cut`) on the same numbers.

A cut rests on distinct requirements: a requirement is one item key (`Section.span_key`:
where in which artifact) across its text versions, and an item of C.5 is the rows of
one key or one normalised text (`pipeline.source_level.item_index`). Each counts once, by
its latest standing decision; a version, a duplicate text or a decision taken again adds
nothing (`distinct_decided`)."""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from librarian.policy.cut import Certified, choose_cut
from librarian.policy.decision import DecisionPolicy
from librarian.policy.plan import ReviewPlan, review_plan
from librarian.text import key_digest

# A row as a cut's evidence: its item's key, its cold confidence, its cold first suggestion
# ("" when it has none).
Entry = tuple[str, float, str]
# One version of a requirement: its key's digest and its normalised text's (`text_digest`;
# "" where the evidence was stored without it).
Version = tuple[str, str]
# A decided version, with the CREs its person chose (none: rejected).
Decided = tuple[str, str, Sequence[str]]


def normalised(text: str) -> str:
    """A text as C.5 compares two rows' (rows with the same one are one item)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def text_digest(text: str) -> str:
    """A row's text as C.5 keeps it (`pipeline.compact.compared`): which version it is."""
    return key_digest(normalised(text))


def distinct_decided(decided: Iterable[Decided]) -> list[Decided]:
    """One decided version per requirement, the first of each (the caller gives the
    latest standing decision first): a later one with the same key (another version) or
    the same text (a duplicate) is the same item and counts nothing more."""
    keys: set[str] = set()
    texts: set[str] = set()
    out: list[Decided] = []
    for key, text, cres in decided:
        if key in keys or (text and text in texts):
            continue
        keys.add(key)
        texts.add(text)
        out.append((key, text, cres))
    return out


@dataclass(frozen=True)
class CutEvidence:
    """What a source's cut was chosen from, as the run or relink that chose it saw it: each
    undecided row's and each decided item's cold confidence and first suggestion (read
    from no decision, `SourceLevelSlot._cold`). A decision moves none of these, so a
    reader that runs no model can take the decisions made since and choose the cut again
    with `choose_cut`: the one the next relink of the same items chooses (`now`).

    `pending_texts`, `decided_texts`: each entry's text digest (`text_digest`), aligned
    with the entries: which version of its requirement it is, so that a decision on one
    version is read at that version's confidence, never another's of the same key. Empty:
    evidence stored before they were kept (entries are then told apart by key alone)."""

    pending: tuple[Entry, ...]
    decided: tuple[Entry, ...]
    pending_texts: tuple[str, ...] = ()
    decided_texts: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        def rows(entries: tuple[Entry, ...], texts: tuple[str, ...]) -> list[list[Any]]:
            return [
                [key, round(confidence, 12), top, *texts[i : i + 1]]
                for i, (key, confidence, top) in enumerate(entries)
            ]

        return {
            "pending": rows(self.pending, self.pending_texts),
            "decided": rows(self.decided, self.decided_texts),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CutEvidence:
        def rows(name: str) -> tuple[tuple[Entry, ...], tuple[str, ...]]:
            found = [list(row) for row in data.get(name, ())]
            entries = tuple((str(r[0]), float(r[1]), str(r[2])) for r in found)
            texts = tuple(str(r[3]) for r in found if len(r) > 3)
            return entries, texts if len(texts) == len(entries) else ()

        (pending, pending_texts), (decided, decided_texts) = rows("pending"), rows("decided")
        return cls(pending, decided, pending_texts, decided_texts)

    def confidences(self) -> dict[Version, float]:
        """Each version's cold confidence, by (key, text digest); "" for the text where the
        evidence has none (`store.progress.sample_frame` reads both)."""
        return {(key, text): confidence for key, text, confidence, _ in self._entries()}

    def _entries(self) -> list[tuple[str, str, float, str]]:
        """Every entry, pending first, as (key, text digest or "", confidence, top)."""

        def of(entries: tuple[Entry, ...], texts: tuple[str, ...]) -> list[Any]:
            known = texts if len(texts) == len(entries) else ("",) * len(entries)
            return [(k, t, c, top) for (k, c, top), t in zip(entries, known, strict=True)]

        return of(self.pending, self.pending_texts) + of(self.decided, self.decided_texts)

    def now(
        self,
        decided: Sequence[Decided],
        present: Collection[Version],
        open_items: Collection[Version] = (),
    ) -> Evidence | None:
        """The evidence after the decisions `decided` (each decided version, latest
        standing decision first, with the CREs its person chose; none: rejected), among the
        versions `present` in the store (undecided: open or linked), `open_items` those a
        relink decides again: the cold confidences of the undecided ones, each once, and of
        each decided requirement once (`distinct_decided`) with whether its first
        suggestion was chosen. None: a version was decided that this evidence never saw
        (the next run or relink has to link it)."""
        entries = self._entries()
        exact = {(k, t): (c, top) for k, t, c, top in entries if t}
        by_key = {k: (c, top) for k, _, c, top in entries}

        def seen(key: str, text: str) -> tuple[float, str] | None:
            return exact.get((key, text)) or (by_key.get(key) if not exact else None)

        counted = distinct_decided(decided)
        found = [seen(key, text) for key, text, _ in counted]
        if any(f is None for f in found):
            return None
        reviewed = [f[0] for f in found if f is not None]
        correct = [
            bool(f[1]) and f[1] in cres
            for f, (_, _, cres) in zip(found, counted, strict=True)
            if f is not None
        ]
        taken = {(k, t) for k, t, _ in decided}
        pending, opened = _undecided(entries, taken, present, open_items)
        return Evidence(pending, reviewed, correct, opened)


def _undecided(
    entries: Sequence[tuple[str, str, float, str]],
    taken: Collection[Version],
    present: Collection[Version],
    open_items: Collection[Version],
) -> tuple[list[float], list[bool]]:
    """The undecided versions' confidences, each once, and which are open. An entry stored
    without its text is matched by key (evidence from before texts were kept)."""
    taken_keys, present_keys = {k for k, _ in taken}, {k for k, _ in present}
    open_keys = {k for k, _ in open_items}
    counted: set[Version] = set()
    pending: list[float] = []
    opened: list[bool] = []
    for key, text, confidence, _ in entries:
        if (key, text) in counted:
            continue
        counted.add((key, text))
        if text:
            undecided = (key, text) in present and (key, text) not in taken
            is_open = (key, text) in open_items
        else:
            undecided, is_open = key in present_keys and key not in taken_keys, key in open_keys
        if undecided:
            pending.append(confidence)
            opened.append(is_open)
    return pending, opened


@dataclass(frozen=True)
class Evidence:
    """A source's confidences as its cut reads them: the undecided items' (`pending`), the
    decided items' (`reviewed`) and whether each decided one's first suggestion was right;
    `open_items`, aligned with `pending`: which are open items (what a relink decides
    again; the others are linked already). None: not known."""

    pending: list[float]
    reviewed: list[float]
    correct: list[bool]
    open_items: list[bool] | None = None

    def cut(self, policy: DecisionPolicy) -> Certified:
        return choose_cut(self.pending, self.reviewed, self.correct, policy)

    def plan(self, policy: DecisionPolicy) -> ReviewPlan:
        return review_plan(self.pending, self.reviewed, self.correct, policy)

    def to_link(self, cut: Certified) -> int:
        """The open items `cut` links: those at or above it (the ones the next relink or
        run links; the other undecided items it certifies are linked already)."""
        if cut.basis != "reviewed" or self.open_items is None:
            return 0
        return sum(
            1
            for confidence, is_open in zip(self.pending, self.open_items, strict=True)
            if is_open and confidence >= cut.cut
        )

"""A document's new version matched to its last one by what each requirement says, not
by its place: a person who removes clause IV.e re-letters IV.f as IV.e, and the
requirement that moved is the same requirement. Each new item takes the identity (its
chunk and its row's address: what the store keys decisions, updates and withdrawals by)
of the old item it matches:

1. the same text (spaces and case aside), in order;
2. else the most similar text left (difflib's ratio over words, the same label a little
   more), at least MIN_SIMILAR: an edited clause, an update of the old one;
3. else none: a new requirement, under its own label unless an old item holds that
   identity (then `label~2`, never an old item's: it would read as that item's update).

An old item no new one matches has left the document (withdrawn by the run)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

MIN_SIMILAR = 0.6  # share of words in common (difflib's ratio) for an edit, not a new one
SAME_LABEL = 0.1  # what the same label adds to two texts' similarity
# Past this many pairs of unmatched old and new items, only texts and labels are matched
# (each pair's similarity costs ~50 µs: 250,000 pairs ~12 s).
MAX_PAIRS = 250_000


@dataclass(frozen=True)
class Item:
    label: str  # the id the document gives it now (or gave it)
    text: str


@dataclass
class Alignment:
    """Each new item's identity (by position), and what the match found."""

    identities: list[str]
    relabelled: list[tuple[str, str]] = field(default_factory=list)  # (old label, new)
    edited: list[str] = field(default_factory=list)  # identities whose text changed
    new: list[str] = field(default_factory=list)  # new items' labels
    gone: list[str] = field(default_factory=list)  # old identities no new item matches

    def lines(self) -> list[str]:
        """What the run says of the version (nothing when it is the first)."""
        if not (self.relabelled or self.edited or self.new or self.gone):
            return []
        moved = ", ".join(f"{a} -> {b}" for a, b in self.relabelled[:10])
        more = f" and {len(self.relabelled) - 10} more" if len(self.relabelled) > 10 else ""
        said = (
            f"matched to the last version by text: {len(self.edited)} changed, "
            f"{len(self.new)} new, {len(self.gone)} no longer in it"
        )
        return [said + (f"; relabelled: {moved}{more}" if moved else "")]


def align(new: Sequence[Item], old: Sequence[Item]) -> Alignment:
    """The identity of each of `new` (a version's items, in order) given `old` (the
    document's items as last stored: their identities and texts)."""
    chosen: list[int | None] = [None] * len(new)
    free = _exact(new, old, chosen)
    _similar(new, old, chosen, free)
    taken = {o.label for o in old}
    out = Alignment([])
    for item, match in zip(new, chosen, strict=True):
        if match is None:
            out.identities.append(_fresh(item.label, taken))
            out.new.append(item.label)
            continue
        before = old[match]
        out.identities.append(before.label)
        if before.label != item.label:
            out.relabelled.append((before.label, item.label))
        if _words(before.text) != _words(item.text):
            out.edited.append(before.label)
    matched = {m for m in chosen if m is not None}
    out.gone = [o.label for k, o in enumerate(old) if k not in matched]
    return out


def _exact(new: Sequence[Item], old: Sequence[Item], chosen: list[int | None]) -> set[int]:
    """Items whose text is unchanged, matched in order; the old items left."""
    waiting: dict[str, list[int]] = defaultdict(list)
    for k, item in enumerate(old):
        waiting[" ".join(_words(item.text))].append(k)
    for n, item in enumerate(new):
        same = waiting.get(" ".join(_words(item.text)))
        if same:
            chosen[n] = same.pop(0)
    return {k for ks in waiting.values() for k in ks}


def _similar(
    new: Sequence[Item], old: Sequence[Item], chosen: list[int | None], free: set[int]
) -> None:
    """The items left, paired most similar first (an edited clause keeps its identity)."""
    left = [n for n, c in enumerate(chosen) if c is None]
    if not left or not free:
        return
    if len(left) * len(free) > MAX_PAIRS:
        by_label = {old[k].label: k for k in free}
        for n in left:
            k = by_label.pop(new[n].label, None)
            if k is not None:
                chosen[n] = k
        return
    pairs = []
    for n in left:
        words = _words(new[n].text)
        for k in free:
            score = SequenceMatcher(None, words, _words(old[k].text), autojunk=False).ratio()
            score += SAME_LABEL if new[n].label == old[k].label else 0.0
            if score >= MIN_SIMILAR:
                pairs.append((-score, n, k))
    for _, n, k in sorted(pairs):
        if chosen[n] is None and k in free:
            chosen[n] = k
            free.discard(k)


def _fresh(label: str, taken: set[str]) -> str:
    """A new item's identity: its label, unless an old item holds it."""
    identity, n = label, 1
    while identity in taken:
        n += 1
        identity = f"{label}~{n}"
    taken.add(identity)
    return identity


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())

"""Negation parity: a section that says the opposite of a hub's name must reach a person.

"Passwords need not be hashed" sits next to "Hash passwords" in any embedding space;
a cosine cannot see the "not". Hub names carry their own negations ("Do not log
credentials"), so what flags is a mismatch about the same thing: one side negates words
the other side also uses, and the other side negates nothing. An ordinary prohibition
about something else ("secrets must never be committed" beside "Do not store secrets in
code"), a negation in a relative clause ("reviewers who were not involved") and a
trailing "or not" are no mismatch (docs/quality.md has the false flags before and after).
Nor is a prohibition of a manner the other side never names: "passwords must never be
stored in plaintext" forbids the plaintext, not the storing, beside "store passwords
securely"; a prohibition whose every word the other side uses ("sessions must never be
terminated after logout" beside "terminate sessions after logout") still flags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# A negation cue and the words it governs: those after it ("not hashed"), or, for the
# adjectives that follow what they negate, those before it ("CSRF protection is optional").
_CUE = re.compile(
    r"^(not|never|no|none|nor|cannot|without|neither|needn't|[a-z]+n't|prohibited|forbidden)$"
)
_POSTPOSED = frozenset({"optional", "unnecessary", "exempt"})
# A prohibition said after what it forbids ("home-grown cryptography is prohibited"),
# unless a "from" follows it ("users are prohibited from sharing accounts").
_PROHIBITED = frozenset({"prohibited", "forbidden"})
# A "not" that lifts an obligation rather than forbids: "should not be required to",
# "is not necessary", "no need to": a permission, which contradicts the obligation.
_OBLIGATION = frozenset(
    {"required", "necessary", "mandatory", "needed", "need", "obliged", "compulsory", "obligatory"}
)
# A negation in a relative or purpose clause is about someone or something else:
# "reviewers who were not involved", "… so attackers cannot forge log entries".
_RELATIVE = frozenset({"who", "whom", "whose", "which", "so"})
# A modal just before a cue makes a prohibition ("must never", "shall not").
_MODALS = frozenset({"must", "shall", "should"})
# Words that forbid or restrict without a "not" ("Avoid using the Origin header", "Use
# nonces only once"): a text holding one says no to something, so a "never" beside it is
# no mismatch. They only ever spare a flag, never raise one.
_LOOSENING = frozenset({"without"})  # with _POSTPOSED and "need not": a permission
_RESTRICTING = frozenset(
    {"avoid", "prevent", "disable", "deny", "forbid", "prohibit", "disallow", "only", "reject"}
)
SCOPE_WORDS = 6
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_FUNCTION_WORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "to",
        "be",
        "is",
        "are",
        "was",
        "were",
        "been",
        "being",
        "in",
        "on",
        "of",
        "for",
        "at",
        "by",
        "as",
        "it",
        "its",
        "this",
        "these",
        "those",
        "and",
        "or",
        "so",
        "such",
        "then",
        "than",
        "with",
        "from",
        "into",
        "any",
        "all",
        "each",
        "every",
        "must",
        "shall",
        "should",
        "may",
        "might",
        "can",
        "could",
        "will",
        "would",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "need",
        "needs",
        "longer",
    }
)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("\u2019", "'"))


def _content(words: list[str]) -> set[str]:
    return {w for w in words if w not in _FUNCTION_WORDS and not _CUE.match(w)}


_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "edly", "ed", "es", "s", "ly")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]  # logged -> logg -> log
    return word


class _Words:
    """A text's content words, asked "do you hold the same word as `word`?": the same
    word, or one stem (hash/hashed, log/logged, terminate/terminated: stems of four letters
    or more sharing all but their last two, and at least four). By lookup, not by comparing
    every pair: the same stem, or one of those sharing its first four letters."""

    def __init__(self, words: set[str]) -> None:
        self.words = words
        self._stems: set[str] | None = None  # made when first asked: most texts never are
        self._by_prefix: dict[str, list[str]] = {}

    def __len__(self) -> int:
        return len(self.words)

    def has(self, word: str) -> bool:
        """Whether any of the words is the same as `word`."""
        if self._stems is None:
            self._stems = {_stem(w) for w in self.words}
            for known in self._stems:
                if len(known) >= 4:
                    self._by_prefix.setdefault(known[:4], []).append(known)
        stem = _stem(word)
        if stem in self._stems:
            return True
        if len(stem) < 4:
            return False
        return any(_same_stem(stem, other) for other in self._by_prefix.get(stem[:4], ()))


def _same_stem(a: str, b: str) -> bool:
    """Two stems that differ, each of four letters or more, as one word's."""
    short = min(len(a), len(b))
    shared = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), short)
    return shared >= max(4, short - 2)


@dataclass(frozen=True)
class _Negation:
    """One negation that counts: its cue, the content words it governs, whether it is a
    prohibition (a modal just before it: "must never") and whether it loosens rather than
    forbids ("without restriction", "optional", "need not")."""

    cue: str
    scope: frozenset[str]
    forbids: bool
    loosens: bool


def _scoped(words: list[str]) -> list[_Negation]:
    """Each negation that counts (not in a relative clause, no "… or not")."""
    scoped = []
    for i, word in enumerate(words):
        if word in _POSTPOSED:
            scope = _content(words[max(0, i - SCOPE_WORDS) : i])
            scoped.append(_Negation(word, frozenset(scope), False, True))
        elif word in _PROHIBITED and words[i + 1 : i + 2] != ["from"]:
            scope = _content(words[max(0, i - SCOPE_WORDS) : i])
            scoped.append(_Negation(word, frozenset(scope), True, False))
        elif _CUE.match(word) and not _RELATIVE & set(words[max(0, i - 3) : i]):
            if word == "not" and i > 0 and words[i - 1] == "or":
                continue  # "… or not", "whether or not": an alternative, not a negation
            scope = _content(words[i + 1 : i + 1 + SCOPE_WORDS])
            before = set(words[max(0, i - 2) : i])
            lifted = bool(_OBLIGATION & set(words[i + 1 : i + 3]))
            loosens = word in _LOOSENING or "need" in before or word == "needn't" or lifted
            forbids = bool(_MODALS & before) and not lifted
            scoped.append(_Negation(word, frozenset(scope), forbids, loosens))
    return scoped


def negating_words(text: str, other: str) -> list[str]:
    """The negations in `text` that govern words `other` also uses: what raised a flag."""
    shared = _Words(_content(_tokens(other)))
    found = []
    for negation in _scoped(_tokens(text)):
        governed = sorted(w for w in negation.scope if shared.has(w))
        if governed:
            found.append(f"“{negation.cue}” ({', '.join(governed)})")
    return found


def negations(text: str) -> int:
    """How many negations in `text` count (not in a relative clause)."""
    return len(_scoped(_tokens(text)))


def _negates_about(scopes: list[_Negation], other: _Words) -> bool:
    return any(other.has(w) for n in scopes for w in n.scope)


def _bearing(scopes: list[_Negation], other: _Words) -> list[_Negation]:
    """The negations that bear on `other`: all but a prohibition of a manner `other` does
    not name (a word it governs that `other` never uses: "never ... in plaintext")."""
    return [n for n in scopes if not n.forbids or all(other.has(w) for w in n.scope)]


def _agrees(negating: list[_Negation], quiet: list[str]) -> bool:
    """A text that forbids (never, not) beside one that restricts without a "not" ("avoid",
    "only once") says the same no: no mismatch. A loosening ("without restriction") beside
    a restriction is one."""
    return bool(_RESTRICTING & set(quiet)) and not any(n.loosens for n in negating)


@lru_cache(maxsize=4096)
def _read(text: str) -> tuple[list[str], list[_Negation], _Words]:
    """A text's words, negations and content words. Cached: a hub name is checked
    against many sections (522 names, one a row)."""
    words = _tokens(text)
    return words, _scoped(words), _Words(_content(words))


def negation_differs(one: str, other: str) -> bool:
    """True when one text negates what both speak of and the other negates nothing (a
    section and a hub name, or a span's old and new text)."""
    words_one, scopes_one, content_one = _read(one)
    words_other, scopes_other, content_other = _read(other)
    if not scopes_one and not scopes_other:
        return False  # neither negates anything (what follows could only say so again)
    bearing_one = _bearing(scopes_one, content_other)
    bearing_other = _bearing(scopes_other, content_one)
    first = _negates_about(bearing_one, content_other)
    second = _negates_about(bearing_other, content_one)
    if first != second:
        negating, quiet = (bearing_one, words_other) if first else (bearing_other, words_one)
        return not (scopes_other if first else scopes_one) and not _agrees(negating, quiet)
    if first or not _mostly_shared(content_one, content_other):
        return False
    # Neither negation names a shared word, but the two say much the same ("reused
    # without restriction" beside "use only once"): the polarity of the whole decides,
    # a prohibition of a manner the other does not name counting for none.
    if bool(bearing_one) == bool(bearing_other):
        return False
    negating, quiet = (bearing_one, words_other) if bearing_one else (bearing_other, words_one)
    return not _agrees(negating, quiet)


def _mostly_shared(one: _Words, other: _Words) -> bool:
    """At least half of the shorter text's content words (two or more) are the other's."""
    shorter, longer = (one, other) if len(one) <= len(other) else (other, one)
    found = sum(longer.has(w) for w in shorter.words)
    return found >= 2 and found * 2 >= len(shorter)

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from librarian.pipeline.negation import negation_differs


@pytest.mark.parametrize(
    ("text", "hub", "flag"),
    [
        ("Passwords need not be hashed", "Hash passwords", True),
        ("The app doesn\u2019t need TLS", "Use TLS", True),
        ("Sessions are never terminated after logout", "Terminate session after logout", True),
        ("CSRF protection is optional", "CSRF protection", True),
        ("Verify that passwords are not truncated", "Do not truncate passwords", False),
        ("Use TLS for every connection", "Use TLS", False),
        # Issue 22, item 6: ordinary prohibitions and asides, no mismatch about one thing
        (
            "Secrets must never be committed to the repository",
            "Do not store secrets in code",
            False,
        ),
        ("Error pages must not reveal stack traces", "Handle errors securely", False),
        (
            "Have a qualified person who was not involved with the design review the code",
            "Design review",
            False,
        ),
        (
            "Detect whether a data point is an adversarial example or not",
            "Adversarial examples",
            False,
        ),
        ("User data is encoded so attackers cannot forge log entries", "Encode user input", False),
        # ...and the true mismatches stay: the same thing, one side negated
        (
            "Access control decisions are not logged to save space",
            "Log access control decisions",
            True,
        ),
        (
            "Nonces and initialization vectors can be reused without restriction",
            "Use nonces and initialization vectors only once",
            True,
        ),
        # Issue 41, item 9: a prohibition of a manner the hub name does not name
        ("Passwords must never be stored in plaintext", "Store passwords securely", False),
        ("Keys shall not be hard-coded in source", "Store cryptographic keys securely", False),
        # ...nor a "never" beside a name that says no without a "not"
        (
            "Access control decisions never rely on the Origin or Referer header alone",
            "Avoid using of Origin header for authentication of access control",
            False,
        ),
        (
            "An initialization vector or nonce is never reused with the same encryption key",
            "Use nonces and initialization vectors only once",
            False,
        ),
        # ...a prohibition of the thing itself, or a plain statement, still flags
        (
            "Sessions must never be terminated after logout",
            "Terminate session after logout",
            True,
        ),
        ("Passwords are never stored hashed", "Store passwords hashed", True),
        (
            "Notification emails are sent on login",
            "Inform users of logins",
            False,
        ),  # "not" in a word
        # Issue 48, item 4: a prohibition that agrees is no mismatch ...
        (
            "Only approved cryptographic algorithms may be used; home-grown cryptography is "
            "prohibited.",
            "Use approved cryptographic algorithms",
            False,
        ),
        ("Users are prohibited from sharing accounts.", "Do not share accounts", False),
        ("Storing passwords in plaintext is prohibited.", "Store passwords securely", False),
        ("Sharing accounts is prohibited.", "Share accounts between users", True),
        # ... and a permission lifting the obligation is a contradiction, said any way
        (
            "Users should not be required to authenticate before accessing administrative "
            "functions.",
            "Authenticate users before administrative access",
            True,
        ),
        (
            "Multi-factor authentication need not be used for remote access.",
            "Use multi-factor authentication for remote access",
            True,
        ),
        ("Encryption of backups is not necessary.", "Encrypt backups", True),
        ("There is no need to rotate session tokens after login.", "Rotate session tokens", True),
        (
            "Session tokens are not required to be rotated after login.",
            "Rotate session tokens after login",
            True,
        ),
        ("Backups are not mandatory for test systems.", "Back up systems", True),
    ],
)
def test_negation_parity(text: str, hub: str, flag: bool) -> None:
    assert negation_differs(text, hub) is flag


def _same_pairwise(one: str, other: str) -> bool:
    """The rule the lookup in `_Words.has` answers, pair by pair: the same stem, or stems
    of four letters or more sharing all but their last two letters (and at least four)."""
    from librarian.pipeline.negation import _stem

    a, b = _stem(one), _stem(other)
    if a == b:
        return True
    short = min(len(a), len(b))
    if short < 4:
        return False
    shared = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), short)
    return shared >= max(4, short - 2)


WORDS = st.text(alphabet="aeilnogstdr", min_size=1, max_size=12)


@given(word=WORDS, words=st.sets(WORDS, max_size=30))
@example(word="logged", words={"log", "logging"})
@example(word="terminate", words={"terminated"})
@example(word="hash", words={"hashes", "has"})
def test_the_word_lookup_answers_as_every_pair_compared(word: str, words: set[str]) -> None:
    """Issue 49, item 8: C.8 compared every word with every other (0.5 ms a row, the most
    of C.6-C.10); the lookup must answer exactly as that did."""
    from librarian.pipeline.negation import _Words

    assert _Words(words).has(word) == any(_same_pairwise(word, o) for o in words)

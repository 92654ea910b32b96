from __future__ import annotations

import pytest

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
        (
            "Notification emails are sent on login",
            "Inform users of logins",
            False,
        ),  # "not" in a word
    ],
)
def test_negation_parity(text: str, hub: str, flag: bool) -> None:
    assert negation_differs(text, hub) is flag

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
        (
            "Notification emails are sent on login",
            "Inform users of logins",
            False,
        ),  # "not" in a word
    ],
)
def test_negation_parity(text: str, hub: str, flag: bool) -> None:
    assert negation_differs(text, hub) is flag

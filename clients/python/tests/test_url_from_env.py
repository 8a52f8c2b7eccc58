"""The server URL from the environment, as the acms CLI reads it (no server needed)."""

from __future__ import annotations

import pytest

from acms_client import AcmsClient, url_from_env


@pytest.mark.parametrize(
    ("env", "url"),
    [
        ({}, "http://127.0.0.1:50051"),
        ({"ACMS_URL": "http://example.test:9000/"}, "http://example.test:9000"),
        ({"ACMS_URL": "https://acms.example", "ACMS_PORT": "1"}, "https://acms.example"),
        ({"ACMS_PORT": "50123"}, "http://127.0.0.1:50123"),
        ({"ACMS_HOST": "0.0.0.0", "ACMS_PORT": "7"}, "http://127.0.0.1:7"),
        ({"ACMS_HOST": "::"}, "http://[::1]:50051"),
        ({"ACMS_HOST": "fd00::2", "ACMS_PORT": "8080"}, "http://[fd00::2]:8080"),
        ({"ACMS_URL": " ", "ACMS_HOST": "acms.internal"}, "http://acms.internal:50051"),
    ],
)
def test_acms_url_else_host_and_port(env: dict[str, str], url: str) -> None:
    assert url_from_env(env) == url


def test_a_bad_port_is_refused_with_what_was_given() -> None:
    with pytest.raises(ValueError, match='got "http"'):
        url_from_env({"ACMS_PORT": "http"})


def test_from_env_needs_a_key_and_takes_the_scope() -> None:
    with pytest.raises(ValueError, match="ACMS_API_KEY"):
        AcmsClient.from_env({"ACMS_PORT": "50123"})
    with AcmsClient.from_env({"ACMS_PORT": "50123", "ACMS_API_KEY": "k", "ACMS_SCOPE": "01SCOPE"}) as acms:
        assert (acms.url, acms.api_key, acms.scope_id) == ("http://127.0.0.1:50123", "k", "01SCOPE")

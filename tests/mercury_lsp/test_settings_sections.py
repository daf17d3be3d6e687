"""Settings as editors send them: empty or null sections are no settings (Lua encodes `{}` as
`[]`), client-side keys are logged quietly instead of being reported to the user."""

from __future__ import annotations

import logging

import pytest

from mercury_lsp.config import Settings, parse_settings


@pytest.mark.parametrize("raw", [None, {}, [], {"mercury": []}, {"mercury": None}, {"mercury": {}}])
def test_empty_sections_are_accepted_silently(raw):
    assert parse_settings(raw) == (Settings(), [])


def test_empty_nested_section_changes_nothing():
    s, problems = parse_settings({"mercury": {"nextEdit": [], "context": None, "maxTokens": 8}})
    assert problems == [] and s.max_tokens == 8 and s.next_edit == Settings().next_edit


def test_client_only_keys_are_logged_not_reported(caplog):
    with caplog.at_level(logging.INFO, logger="mercury_lsp"):
        s, problems = parse_settings({"mercury": {"serverPath": "/x/mercury-lsp", "enable": True,
                                                  "trace": {"server": "verbose"}, "preset": "fast"}})
    assert problems == [] and s.preset == "fast"
    assert "serverPath" in caplog.text and "trace" in caplog.text
    # A key nobody knows is still reported, and a client key inside a nested section is unknown.
    _, problems = parse_settings({"serverPth": 1, "nextEdit": {"serverPath": "x"}})
    assert problems == ["serverPth (unknown setting)", "nextEdit.serverPath (unknown setting)"]

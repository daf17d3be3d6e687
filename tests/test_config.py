from mercury_lsp.config import Settings, parse_settings


def test_invalid_fields_keep_previous_values_and_are_named():
    base = Settings(max_tokens=64)
    s, problems = parse_settings({"maxTokens": -3, "preset": "fast", "spanTokens": {"line": "x", "block": 40},
                                  "bogus": 1, "debounceMs": 5}, base)
    assert s.max_tokens == 64 and s.preset == "fast" and s.span_tokens.block == 40
    assert s.span_tokens.line == 24 and s.debounce_ms == 5
    assert [p.split(" ")[0] for p in problems] == ["maxTokens", "spanTokens.line", "bogus"]


def test_section_and_python_names():
    s, problems = parse_settings({"mercury": {"syntax_guard": "off", "enabledLanguages": ["python"]}})
    assert not problems and s.syntax_guard == "off"
    assert s.language_enabled("python") and not s.language_enabled("go")
    s, problems = parse_settings("nonsense")
    assert problems and s == Settings()

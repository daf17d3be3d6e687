import msgspec

from mercury_lsp.config import NextEditOptions, Settings, parse_settings


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


def test_next_edit_options_are_settings():
    s, problems = parse_settings({"nextEdit": {"maxDocuments": 0, "windowFill": 0.5, "drop_ratio": 0.1,
                                               "scoreStride": "x", "bogus": 1}})
    defaults = NextEditOptions()
    assert s.next_edit.max_documents == defaults.max_documents  # invalid: the default is kept
    assert s.next_edit.score_stride == defaults.score_stride
    assert s.next_edit.window_fill == 0.5 and s.next_edit.drop_ratio == 0.1  # valid ones are taken
    assert s.next_edit.max_candidates == defaults.max_candidates
    assert [p.split(" ")[0] for p in problems] == ["nextEdit.maxDocuments", "nextEdit.scoreStride", "nextEdit.bogus"]
    assert msgspec.to_builtins(s)["nextEdit"]["windowFill"] == 0.5  # camelCase on the wire
    # a later layer keeps the fields it does not set
    s2, problems = parse_settings({"nextEdit": {"maxModelCandidates": 8}}, s)
    assert not problems and s2.next_edit.max_model_candidates == 8 and s2.next_edit.window_fill == 0.5


def test_next_edit_timeout_is_a_typed_setting():
    assert Settings().next_edit.timeout_ms == 30_000
    s, problems = parse_settings({"nextEdit": {"timeoutMs": 5000}})
    assert s.next_edit.timeout_ms == 5000 and not problems
    s, problems = parse_settings({"nextEdit": {"timeoutMs": 1}})
    assert s.next_edit.timeout_ms == 30_000 and problems and "nextEdit.timeoutMs" in problems[0]

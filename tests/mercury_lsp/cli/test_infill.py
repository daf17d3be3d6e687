"""The ``infill`` subcommand: bad input gives a clear message and exit status 2, never a traceback.

(Moved out of the engine's tests: no engine test imports the daemon's CLI.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mercury_engine import Engine
from mercury_lsp.cli import main
from mercury_train.testing import make_tiny_checkpoint

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "ckpt")


@pytest.fixture(scope="module")
def engine(tiny_dir) -> Engine:
    return Engine.load(tiny_dir, device="cpu", dtype="float32", context_tokens=64)


# ---------------------------------------------------------------------------- CLI
SOURCE = "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n"


@pytest.fixture
def source(tmp_path) -> Path:
    f = tmp_path / "example.py"
    f.write_text(SOURCE, encoding="utf-8")
    return f


def _cli(tiny_dir, *args: str) -> int:
    return main(["infill", *args, "--model", str(tiny_dir), "--device", "cpu", "--dtype", "float32"])


def test_cli_infill_prints_text(tiny_dir, engine, source, capsys):
    assert _cli(tiny_dir, str(source), "--line", "2", "--col", "12", "--max-tokens", "4") == 0
    captured = capsys.readouterr()
    expected = Engine.load(tiny_dir, device="cpu", dtype="float32").infill("def add(a, b):\n    return ", "a + b\n\nprint(add(1, 2))\n", 4).text
    assert captured.out == (expected + ("" if expected.endswith("\n") else "\n") if expected else "")
    # Where the fill went, as FILE:LINE:COL on stderr (stdout stays the fill alone, for pipes).
    assert captured.err.startswith(f"{source}:2:12: ")
    assert (f"{len(expected)} characters" if expected else "nothing to fill") in captured.err


def test_cli_infill_json(tiny_dir, source, capsys):
    assert _cli(tiny_dir, str(source), "--line", "5", "--col", "1", "--max-tokens", "3", "--steps", "2",
                "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"text", "token_ids", "confidences", "steps", "forwards", "trimmed", "stop_reason"}
    assert isinstance(data["text"], str) and 1 <= data["steps"] <= 2


@pytest.mark.parametrize("args,message", [
    (["{missing}", "--line", "1", "--col", "1"], "no such file"),
    (["{dir}", "--line", "1", "--col", "1"], "cannot read as UTF-8 text"),
    (["{binary}", "--line", "1", "--col", "1"], "cannot read as UTF-8 text"),
    (["{src}", "--line", "99", "--col", "1"], "--line 99 is outside the file (1..5)"),
    (["{src}", "--line", "0", "--col", "1"], "--line 0 is outside the file"),
    (["{src}", "--line", "2", "--col", "80"], "--col 80 is outside line 2 (1..17)"),
    (["{src}", "--line", "1", "--col", "1", "--max-tokens", "0"], "max_tokens must be a positive integer"),
    (["{src}", "--line", "1", "--col", "1", "--steps", "0"], "steps must be a positive integer"),
    (["{src}", "--line", "1", "--col", "1", "--temperature", "-2"], "temperature must be a finite number"),
])
def test_cli_bad_input(tiny_dir, source, tmp_path, capsys, args, message):
    binary = tmp_path / "blob.py"
    binary.write_bytes(b"\xff\xfe\x00bad")
    paths = {"missing": str(tmp_path / "missing.py"), "dir": str(tmp_path), "binary": str(binary),
             "src": str(source)}
    args = [a.format(**paths) for a in args]
    assert _cli(tiny_dir, *args) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("mercury-lsp infill: error: ")
    assert message in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


@pytest.mark.parametrize("model,message", [
    ("{tmp}/no-model-here", "no such model directory"),
    ("{tmp}/example.py", "not a file"),
])
def test_cli_bad_model(source, tmp_path, capsys, model, message):
    code = main(["infill", str(source), "--line", "1", "--col", "1", "--model", model.format(tmp=tmp_path),
                 "--device", "cpu"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("mercury-lsp infill: error: ") and message in err and "Traceback" not in err


def test_cli_bad_dtype(tiny_dir, source, capsys):
    code = main(["infill", str(source), "--line", "1", "--col", "1", "--model", str(tiny_dir), "--device", "cpu",
                 "--dtype", "float8"])
    assert code == 2
    assert "unknown dtype 'float8'" in capsys.readouterr().err


def test_cli_lines_are_editor_lines(tiny_dir, tmp_path, monkeypatch, capsys):
    """A form feed (or U+2028) inside a line does not start a new line, CRLF does."""
    from mercury_lsp.cli import split_at

    text = "a = 1\x0c# page\nb = 2\u2028c\r\nd = 4\n"
    assert split_at(text, 2, 5) == ("a = 1\x0c# page\nb = ", "2\u2028c\r\nd = 4\n")
    assert split_at(text, 3, 1) == ("a = 1\x0c# page\nb = 2\u2028c\r\n", "d = 4\n")
    assert split_at(text, 4, 1) == (text, "")
    seen = {}
    real_infill = Engine.infill

    def spy(self, prefix, suffix="", *args, **kwargs):
        seen["prefix"], seen["suffix"] = prefix, suffix
        return real_infill(self, prefix, suffix, *args, **kwargs)

    monkeypatch.setattr(Engine, "infill", spy)
    f = tmp_path / "ff.py"
    f.write_bytes(text.encode())
    assert _cli(tiny_dir, str(f), "--line", "3", "--col", "3", "--max-tokens", "2") == 0
    assert seen["prefix"].endswith("c\nd ") and seen["suffix"] == "= 4\n"
    capsys.readouterr()


def test_cli_usage_errors_exit_nonzero(source, capsys):
    with pytest.raises(SystemExit) as info:
        main(["infill", str(source), "--col", "1"])  # --line missing
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "--line" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as info:
        main(["infill", str(source), "--line", "two", "--col", "1"])
    assert info.value.code == 2
    assert "invalid int value" in capsys.readouterr().err


NEIGHBOUR = ("import json\n\n\ndef load_settings(path):\n    with open(path, encoding='utf-8') as fh:\n"
             "        return json.load(fh, object_hook=SettingsRecord.from_mapping)\n\n\n"
             "def save(path, settings):\n    with open(path, 'w') as fh:\n        json.dump(settings, fh)\n")


def test_cli_infill_answers_a_line_the_repository_holds_from_the_memory(tiny_dir, tmp_path, capsys):
    (tmp_path / "settings.py").write_text(NEIGHBOUR, encoding="utf-8")
    doc = tmp_path / "other.py"
    doc.write_text(NEIGHBOUR.replace("load_settings", "read_other").replace(
        "json.load(fh, object_hook=SettingsRecord.from_mapping)", ""), encoding="utf-8")
    assert _cli(tiny_dir, str(doc), "--line", "6", "--col", "16", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["text"] == "json.load(fh, object_hook=SettingsRecord.from_mapping)" and data["source"] == "memory"
    assert _cli(tiny_dir, str(doc), "--line", "6", "--col", "16", "--json", "--no-memory", "--max-tokens", "2") == 0
    assert "token_ids" in json.loads(capsys.readouterr().out)  # the model's answer

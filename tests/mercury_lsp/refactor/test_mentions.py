"""``refactor.mentions``: a rename's mentions in docstrings and comments (click's shape: a function
with ``@overload`` stubs, renamed at all three ``def`` lines, and mentioned in another module's
docstrings by a Sphinx role, in a code example and on a doctest line)."""

from __future__ import annotations

from pathlib import Path

from mercury_lsp.refactor.mentions import (
    LOOSE_MENTION_CONFIDENCE,
    MENTION_CONFIDENCE,
    mention_edits,
    renamed_symbol,
)

GLOBALS = '''import typing as t


@t.overload
def get_current_context(silent: t.Literal[False] = False) -> int: ...


@t.overload
def get_current_context(silent: bool = ...) -> int | None: ...


def get_current_context(silent: bool = False) -> int | None:
    return None
'''

CORE = '''class Context:
    def scope(self):
        """Binds the context to the current thread (see :func:`get_current_context`).

        Example usage::

            with ctx.scope():
                assert get_current_context() is ctx

        >>> f = get_current_context
        >>> ctx.get_current_context()

        Call get_current_context when you need it; the word stays.
        """
        # another object's member: self.get_current_context() is not it
        return self, "get_current_context() failed"  # a string the code uses: its text stays
'''


def _project(tmp_path: Path) -> tuple[Path, Path]:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .globals import get_current_context as get_current_context\n")
    (pkg / "globals.py").write_text(GLOBALS.replace("def get_current_context(", "def current_context("))
    (pkg / "core.py").write_text(CORE)
    return pkg / "globals.py", pkg / "core.py"


def test_a_function_renamed_with_its_overloads_is_the_renamed_symbol(tmp_path):
    home, _ = _project(tmp_path)
    r = renamed_symbol(GLOBALS, home.read_text(), home)
    assert r is not None
    assert (r.old, r.new, r.parameter_of) == ("get_current_context", "current_context", None)
    assert r.qualified == {"pkg.globals.get_current_context", "pkg.get_current_context"}


def test_roles_calls_and_doctest_lines_follow_plain_words_stay(tmp_path):
    home, core = _project(tmp_path)
    r = renamed_symbol(GLOBALS, home.read_text(), home)
    edits = mention_edits("file:///core.py", CORE, core, r)
    lines = CORE.splitlines()

    def line_of(e):
        return lines[CORE.count("\n", 0, e.start)].strip()

    got = {(line_of(e), e.confidence) for e in edits}
    assert got == {
        ("\"\"\"Binds the context to the current thread (see :func:`get_current_context`).", MENTION_CONFIDENCE),
        ("assert get_current_context() is ctx", LOOSE_MENTION_CONFIDENCE),
        (">>> f = get_current_context", LOOSE_MENTION_CONFIDENCE),
    }
    assert LOOSE_MENTION_CONFIDENCE < MENTION_CONFIDENCE
    assert all(CORE[e.start:e.end] == "get_current_context" and e.new_text == "current_context" for e in edits)
    assert sum("call-shaped mention in a docstring or comment" in e.reason for e in edits) == 2
    after = CORE
    for e in sorted(edits, key=lambda e: -e.start):
        after = after[:e.start] + e.new_text + after[e.end:]
    assert "Call get_current_context when you need it" in after  # a plain word
    assert '"get_current_context() failed"' in after
    assert "ctx.get_current_context()" in after and "self.get_current_context()" in after  # other objects'


def test_outside_the_package_a_module_not_importing_it_keeps_its_calls(tmp_path):
    home, _ = _project(tmp_path)
    r = renamed_symbol(GLOBALS, home.read_text(), home)
    other = tmp_path / "script.py"
    text = '"""Run get_current_context() of another library."""\n'
    other.write_text(text)
    assert mention_edits("file:///script.py", text, other, r) == []

"""Typeahead: the rest of a shown suggestion while the user types into it, and never text that no
longer fits the document. A property test drives the real ``CompletionService`` and
``DocumentStore`` with random edits (insertions, deletions, multi-byte and astral characters,
whole-document replacement, out-of-order versions) and typing along a suggestion."""

from __future__ import annotations

import asyncio
import hashlib

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mercury_lsp.completion import CompletionService
from mercury_lsp.documents import DocumentStore, PositionEncoding
from mercury_lsp.schema import InfillOutcome
from mercury_lsp.syntax import Grammars, grammar_for
from tests.support.settings import drafts

GRAMMARS = Grammars()
UTF16 = PositionEncoding.UTF16
URI = "file:///typeahead.py"
ALPHABET = "ab_ (:\n=é€😀"  # ASCII, 2- and 3-byte UTF-8, an astral character (a UTF-16 pair)


class PrefixSession:
    """An engine session whose answer depends on the text before the cursor (so answers differ
    from state to state), single-line like the engine's line spans."""

    context_tokens, chars_per_token = 256, 3.0

    def infill(self, spec, cancel):
        digest = hashlib.sha256(spec.prefix.encode()).hexdigest()[:6]
        text = f"value_{digest}(é, '😀')"
        return InfillOutcome(text=text, tokens=len(text), mean_confidence=0.5, stop_reason="stop", steps=1,
                             forwards=1, prompt_tokens=0, trimmed=False, elapsed_ms=0.0)


class RecordingEngine:
    """Runs jobs inline and records what the engine answered for which document text."""

    ready = True

    def __init__(self) -> None:
        self.session = PrefixSession()
        self.answers: list[tuple[str, int, str]] = []  # (document text, cursor, suggestion)
        self.calls = 0

    async def run(self, job, token):
        self.calls += 1
        result = job(self.session)
        if result.text:
            self.answers.append((job.keywords["snap"].text, job.keywords["cursor"], result.text))
        return result


def make_service(typeahead: bool = True):
    store = DocumentStore(grammar_for)
    engine = RecordingEngine()
    config = drafts(typeahead=typeahead)
    return CompletionService(engine, store, GRAMMARS, lambda: config), store, engine


def position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return line, sum(2 if ord(c) > 0xFFFF else 1 for c in text[start:offset])


def fits(answers: list[tuple[str, int, str]], text: str, cursor: int, shown: str) -> bool:
    """The shown text is the rest of an engine answer whose document, with the typed part of the
    answer inserted at its cursor, is exactly the current document."""
    for doc, at, full in answers:
        typed = cursor - at
        if 0 <= typed < len(full) and full[typed:] == shown and text == doc[:at] + full[:typed] + doc[at:]:
            return True
    return False


def test_typing_into_a_suggestion_answers_the_rest_without_the_engine():
    service, store, engine = make_service()
    text = "def f(x):\n    return \n"
    store.open(URI, "python", 1, text)
    cursor = text.index("return ") + len("return ")
    first = asyncio.run(service.suggest(URI, *position(text, cursor), UTF16))
    assert first is not None and not first.cached and engine.calls == 1
    typed = first.text[:3]
    store.change(URI, 2, [(None, text[:cursor] + typed + text[cursor:])], UTF16)
    text = store.get(URI).text
    rest = asyncio.run(service.suggest(URI, *position(text, cursor + 3), UTF16))
    assert rest is not None and rest.cached and rest.text == first.text[3:] and rest.version == 2
    assert engine.calls == 1
    # Diverging falls through to the engine.
    store.change(URI, 3, [(None, text[:cursor + 3] + "Z" + text[cursor + 3:])], UTF16)
    text = store.get(URI).text
    other = asyncio.run(service.suggest(URI, *position(text, cursor + 4), UTF16))
    assert engine.calls == 2 and other is not None and not other.cached


def test_typeahead_off_answers_exact_repeats_only():
    service, store, engine = make_service(typeahead=False)
    text = "x = \n"
    store.open(URI, "python", 1, text)
    first = asyncio.run(service.suggest(URI, 0, 4, UTF16))
    assert first is not None
    store.change(URI, 2, [(None, "x = " + first.text[:2] + "\n")], UTF16)
    asyncio.run(service.suggest(URI, 0, 6, UTF16))
    assert engine.calls == 2


edit = st.one_of(
    st.tuples(st.just("insert"), st.floats(0, 1), st.text(ALPHABET, min_size=1, max_size=4)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 4)),
    st.tuples(st.just("replace_all"), st.text(ALPHABET, max_size=30), st.just(0)),
    st.tuples(st.just("type_along"), st.integers(1, 5), st.just(0)),
    st.tuples(st.just("old_version"), st.floats(0, 1), st.text(ALPHABET, min_size=1, max_size=2)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=st.text(ALPHABET, max_size=40), edits=st.lists(edit, min_size=1, max_size=25))
def test_every_answer_fits_the_document_at_its_version(start, edits):
    service, store, engine = make_service()
    store.open(URI, "python", 1, start)
    version, cursor, shown = 1, len(start), None

    async def drive():
        nonlocal version, cursor, shown
        for op, a, b in edits:
            text = store.get(URI).text
            if op == "type_along" and shown:
                new, at = shown[:a], cursor
                change = (position(text, at) * 2, new)
            elif op in ("insert", "old_version"):
                at = round(a * len(text))
                new = b
                change = (position(text, at) * 2, new)
            elif op == "delete":
                at = round(a * len(text))
                end = min(len(text), at + b)
                new = ""
                change = ((*position(text, at), *position(text, end)), new)
            else:
                at, new, change = 0, a if op == "replace_all" else "", (None, a if op == "replace_all" else text)
            # Versions never move backwards (an older one is refused whole: tests/mercury_lsp/server),
            # so "old_version" here is an insert that the editor numbers in order.
            version += 1
            store.change(URI, version, [change], UTF16)
            text = store.get(URI).text
            cursor = at + len(new) if change[0] is not None else len(text)
            s = await service.suggest(URI, *position(text, cursor), UTF16)
            doc = store.get(URI)
            if s is None:
                shown = None
                continue
            assert s.version == doc.version and s.cursor == cursor
            assert fits(engine.answers, doc.text, cursor, s.text)
            shown = s.text
            event("typeahead answer" if s.cached else "engine answer")

    asyncio.run(drive())

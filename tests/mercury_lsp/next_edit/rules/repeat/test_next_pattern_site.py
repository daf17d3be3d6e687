"""NE205 next-pattern-site: a change matching too many places is offered at the next one below."""

from __future__ import annotations

from tests.support.next_edit import applied, ask, doc


def test_a_change_that_matches_too_many_places_is_offered_at_the_next_one_below():
    """``request(server)`` -> ``request(server.listen())`` where a dozen tests call
    ``request(server)``: too many to offer them all, the next one below the cursor is offered
    alone, ranked low; none above it."""
    test = "it('{n}', function (done) {{\n  request(server)\n    .get('/')\n    .expect(200, done)\n}})\n\n"
    src = "".join(test.format(n=n) for n in range(12))
    third = src.index("request(server)", src.index("it('2'"))
    after = src[:third] + "request(server.listen())" + src[third + len("request(server)"):]
    preds = ask(doc("file:///test.js", after, (src,), (1.0,), grammar="javascript"), cursor=third)
    nxt = after.index("request(server)", third + 10)
    assert len(preds) == 1 and preds[0].confidence == 0.35
    assert applied(after, preds, "file:///test.js") == after[:nxt] + "request(server.listen())" + after[nxt + 15:]

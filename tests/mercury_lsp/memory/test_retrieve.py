"""Retrieved context: the definitions of the names near the cursor (code, not prose) and the
chunks of other files most like the code around it (never the document itself)."""

from __future__ import annotations

from mercury_lsp.memory.query import Context
from tests.support.memory import built, write

HELPERS = """\
'''Helpers. The class is documented here, and the def keyword appears in prose.'''


def normalize_header(name: str, *, lower: bool = True) -> str:
    return name.strip().lower() if lower else name.strip()


class HeaderMap:
    def __init__(self):
        self.items = {}
"""

CLIENT = """\
import requests_like


def fetch_headers(session, url):
    response = session.get(url, timeout=30)
    headers = {}
    for key, value in response.raw_headers():
        headers[key] = value
    return headers
"""


def test_definitions_of_names_near_the_cursor_and_similar_chunks(tmp_path, monkeypatch):
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    ws = (tmp_path / "ws")
    write(ws, {"helpers.py": HELPERS, "client.py": CLIENT})
    mem = built(ws.resolve())
    doc = ("def fetch_all(session, url):\n    response = session.get(url, timeout=30)\n"
           "    for key, value in response.raw_headers():\n        h = HeaderMap()\n"
           "        key = normalize_header(")
    got = mem.retrieve(Context((ws / "new.py").as_uri(), doc, len(doc), "python"))
    defs = {c.name: c.text for c in got if c.kind == "definition"}
    assert defs["normalize_header"] == "def normalize_header(name: str, *, lower: bool = True) -> str:\n"
    assert defs["HeaderMap"] == "class HeaderMap:\n"
    similar = [c for c in got if c.kind == "similar"]
    assert similar and similar[0].path.endswith("client.py") and "raw_headers" in similar[0].text
    assert all(not c.path.endswith("new.py") for c in got)
    mem.close()

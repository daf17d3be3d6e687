"""The repository memory end to end on a real folder: continuations from other files, an open
document always overriding its file on disk, changes on disk, a warm restart from the saved
index, and bad input (corrupt or foreign saved index, no writable cache, excluded files,
symbolic link loops, unreadable, binary, huge and generated files, a cap on files and a listing that
stops there, files changing while read, a damaged shard, a failing build) and the shard pages
unmapped when idle."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from mercury_lsp.memory import sources
from mercury_lsp.memory.query import Context
from mercury_lsp.memory.service import Memory, MemoryOptions, OpenDoc, cache_folder
from tests.support.memory import SETTLE_S, built, write


def texts(mem: Memory, doc: str, uri: str, open_docs=(), language: str = "python") -> list[str]:
    ctx = Context(uri, doc, len(doc), language)
    return [c.text for c in mem.candidates(ctx, open_docs)]


MODELS = """\
def load(path):
    with open(path) as fh:
        return parse_config(fh.read(), strict=True)
"""


@pytest.fixture
def ws(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    write(root, {"pkg/models.py": MODELS, "README.md": "# demo\n"})
    return root.resolve()


def test_continuations_come_from_other_files(ws):
    mem = built(ws)
    doc = "def other(path):\n    with open(path) as fh:\n        return "
    assert texts(mem, doc, (ws / "pkg/new.py").as_uri())[0] == "parse_config(fh.read(), strict=True)"
    mem.close()


def test_an_open_document_overrides_its_file_on_disk(ws):
    mem = built(ws)
    doc = "def load(path):\n    with open(path) as fh:\n        return "
    uri = (ws / "pkg/models.py").as_uri()
    # the queried document is the file itself, its line cut: the disk copy is never read
    assert "parse_config(fh.read(), strict=True)" not in texts(mem, doc, uri)
    # another document is queried while models.py is open with other text: the open text wins
    other = "def other(path):\n    with open(path) as fh:\n        return "
    opened = OpenDoc(uri, 3, "def load(path):\n    with open(path) as fh:\n        return json.load(fh)\n")
    got = texts(mem, other, (ws / "pkg/new.py").as_uri(), [opened])
    assert got[0] == "json.load(fh)" and "parse_config(fh.read(), strict=True)" not in got
    mem.close()


def test_a_change_on_disk_hides_the_old_text_at_once_and_the_new_one_follows(ws):
    mem = built(ws)
    other = "def other(path):\n    with open(path) as fh:\n        return "
    uri = (ws / "pkg/new.py").as_uri()
    write(ws, {"pkg/models.py": MODELS.replace("parse_config(fh.read(), strict=True)", "toml.load(fh)")})
    mem.changed(ws / "pkg/models.py")
    assert "parse_config(fh.read(), strict=True)" not in texts(mem, other, uri)  # before any re-read
    assert mem.settle(SETTLE_S)
    assert texts(mem, other, uri)[0] == "toml.load(fh)"
    (ws / "pkg/models.py").unlink()
    mem.changed(ws / "pkg/models.py", deleted=True)
    assert not {"toml.load(fh)", "parse_config(fh.read(), strict=True)"} & set(texts(mem, other, uri))
    mem.close()


def test_a_restart_is_warm_and_rereads_only_what_changed(ws):
    summaries = []
    built(ws, on_done=summaries.append).close()
    write(ws, {"pkg/extra.py": "x = 1\n"})
    mem = built(ws, on_done=summaries.append)
    assert (summaries[0].read, summaries[1].read) == (2, 1)
    assert summaries[1].files == 3
    mem.close()


def test_a_corrupt_or_foreign_saved_index_is_rebuilt_with_one_log_line(ws, caplog):
    built(ws).close()
    folder = cache_folder(ws)
    (folder / "manifest.json").write_text("{not json")
    caplog.set_level(logging.WARNING, logger="mercury_lsp.memory")
    mem = built(ws)
    assert [r.getMessage() for r in caplog.records].count(
        "memory: the saved index of a workspace folder is unusable (JSONDecodeError); building it again") == 1
    assert texts(mem, "def other(path):\n    with open(path) as fh:\n        return ", "file:///x.py")
    mem.close()
    (folder / "manifest.json").write_text('{"format": 1, "root": "/somewhere/else", "shards": [], "files": {}}')
    summaries = []
    built(ws, on_done=summaries.append).close()
    assert summaries[0].read == 2  # rebuilt, not trusted


def test_no_writable_cache_persists_elsewhere_or_not_at_all(ws, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("MERCURY_LSP_CACHE", str(blocker / "cache"))  # under a file: cannot be made
    assert cache_folder(ws) is not None  # the temporary directory instead
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(blocker))
    assert cache_folder(ws) is None
    mem = built(ws)
    assert mem.stats()["files"] == 2
    assert texts(mem, "def other(path):\n    with open(path) as fh:\n        return ", "file:///x.py")
    mem.close()


def test_excluded_files_are_never_indexed_or_returned_even_when_open(ws):
    write(ws, {".env": "API_KEY = 'sk-secret-value'\n", "config.py": "API_KEY = 'sk-secret-value'\n"})
    secret = lambda p: p.name in (".env", "config.py")  # noqa: E731
    mem = built(ws, exclude=secret)
    opened = OpenDoc((ws / "config.py").as_uri(), 1, "API_KEY = 'sk-secret-value'\n")
    assert texts(mem, "API_KEY =", (ws / "pkg/x.py").as_uri(), [opened]) == []
    assert all(".env" not in p and "config.py" not in p for p in mem.stores[0].where)
    mem.close()


def test_symlink_loops_links_out_of_the_root_and_bad_files_are_skipped(ws, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("OUTSIDE_ROOT = leaked_value()\n")
    (ws / "loop").symlink_to(ws, target_is_directory=True)
    (ws / "self.py").symlink_to(ws / "self.py")  # a link to itself
    (ws / "out.py").symlink_to(outside)
    write(ws, {"blob.py": b"x = 1\0\x01\x02", "huge.py": "y = 2\n" * (sources.MAX_FILE_BYTES // 6 + 1),
               "gen.py": "# Code generated by protoc. DO NOT EDIT.\nGENERATED = 1\n", "latin.py": b"s = '\xe9'\n"})
    mem = built(ws)
    assert sorted(Path(p).name for p in mem.stores[0].where) == ["README.md", "models.py"]
    assert texts(mem, "OUTSIDE_ROOT =", "file:///x.py") == []
    mem.close()


def test_a_workspace_past_the_cap_is_indexed_up_to_it_and_says_so_once(ws, caplog):
    write(ws, {f"m{i}.py": f"value_{i} = {i}\n" for i in range(10)})
    caplog.set_level(logging.WARNING, logger="mercury_lsp.memory")
    summaries = []
    mem = built(ws, options=MemoryOptions(max_files=4), on_done=summaries.append)
    assert summaries[0].capped and mem.stats()["files"] == 4
    assert sum("memory.maxFiles" in r.getMessage() for r in caplog.records) == 1
    mem.close()


def test_a_file_changing_while_it_is_read_is_read_again(ws, monkeypatch):
    real = sources.read_source
    target = ws / "pkg/models.py"
    calls = []

    def racing(path, root=None):
        got = real(path, root)
        if path == target and not calls:
            calls.append(path)
            target.write_text(MODELS + "# edited while read\n")
        return got

    monkeypatch.setattr("mercury_lsp.memory.store.read_source", racing)
    mem = built(ws)
    assert mem.settle(SETTLE_S)
    loc = mem.stores[0].where[str(target)]
    assert loc.shard is None  # read again, loose
    assert "# edited while read" in mem.stores[0].loose[str(target)].data.decode()
    mem.close()


def test_nothing_is_written_into_the_workspace(ws):
    before = sorted(p.relative_to(ws) for p in ws.rglob("*"))
    mem = built(ws)
    mem.changed(ws / "pkg/models.py")
    assert mem.settle(SETTLE_S)
    mem.close()
    assert sorted(p.relative_to(ws) for p in ws.rglob("*")) == before


def test_a_block_span_gets_the_body_a_like_header_opens_there(ws):
    write(ws, {"pkg/handlers.py": "class Api:\n    def close(self):\n        self.session.close()\n"
                                  "        self.closed = True\n\n    def other(self):\n        pass\n"})
    mem = built(ws)
    doc = "class Client:\n  def close(self):"
    ctx = Context((ws / "pkg/client.py").as_uri(), doc, len(doc), "python", block=True)
    bodies = [c.text for c in mem.candidates(ctx)]
    assert "\n      self.session.close()\n      self.closed = True" in bodies  # under this header, as deep as there
    assert not [c for c in mem.candidates(Context(ctx.uri, doc, len(doc), "python")) if c.text.startswith("\n")]
    mem.close()


def test_the_listing_stops_at_the_cap_however_large_the_workspace(ws, monkeypatch):
    # a workspace of 500k files, simulated: the listing is drawn from lazily and no further than
    # the cap, so its cost is the cap's, not the workspace's
    write(ws, {f"m{i}.py": f"value_{i} = {i}\n" for i in range(40)})
    real, drawn = sources._walk_paths, []

    def counting(top):
        for p in real(top):
            drawn.append(p)
            yield p

    monkeypatch.setattr(sources, "_walk_paths", counting)
    listing = sources.list_sources([ws], None, 5)
    assert listing.capped and len(listing.files) == 5
    assert len(drawn) <= 8  # the cap, the first one past it, and the non-source README at most


def test_an_unreadable_file_is_skipped_and_the_rest_indexed(ws, monkeypatch):
    write(ws, {"secret.py": "UNREADABLE = 1\n"})
    real_open = open

    def refusing(path, *a, **kw):
        if Path(path).name == "secret.py":
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **kw)

    monkeypatch.setattr(sources, "open", refusing, raising=False)  # as root, chmod 000 reads anyway
    mem = built(ws)
    assert sorted(Path(p).name for p in mem.stores[0].where) == ["README.md", "models.py"]
    assert texts(mem, "def other(path):\n    with open(path) as fh:\n        return ", "file:///x.py")
    mem.close()


def test_a_damaged_shard_is_rebuilt_with_one_log_line(ws, caplog):
    built(ws).close()
    ids = next(cache_folder(ws).glob("*/ids.npy"))
    ids.write_bytes(ids.read_bytes()[:100])  # cut short, as by a full disk or a crash
    caplog.set_level(logging.WARNING, logger="mercury_lsp.memory")
    summaries = []
    mem = built(ws, on_done=summaries.append)
    assert len([r for r in caplog.records if "unusable" in r.getMessage()]) == 1
    assert summaries[0].read == 2  # read again, not trusted
    assert texts(mem, "def other(path):\n    with open(path) as fh:\n        return ", "file:///x.py")
    mem.close()


def test_a_failing_build_degrades_the_memory_and_requests_still_answer(ws, monkeypatch, caplog):
    def out_of_memory(entries):
        raise MemoryError("no room for the suffix array")

    monkeypatch.setattr("mercury_lsp.memory.store.Shard.build", out_of_memory)
    caplog.set_level(logging.ERROR, logger="mercury_lsp.memory")
    mem = built(ws)
    assert sum("memory: indexing stopped" in r.getMessage() for r in caplog.records) == 1
    doc = "def load(path):\n    with open(path) as fh:\n        return parse_config(fh.read())\n\ndef again(path):\n" \
          "    with open(path) as fh:\n        return "
    uri = (ws / "pkg/new.py").as_uri()
    opened = OpenDoc(uri, 1, doc)
    assert texts(mem, doc, uri, [opened]) == ["parse_config(fh.read())"]  # the open document still answers
    assert mem.retrieve(Context(uri, doc, len(doc), "python"), [opened]) is not None
    mem.close()


def mapped_kb(ws: Path) -> int:
    """Resident kB of this process's maps of ``ws``'s saved shard files (/proc/self/smaps)."""
    total, ours = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if line[:1] in "0123456789abcdef" and "-" in line.split()[0]:
            ours = str(cache_folder(ws)) in line
        elif ours and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def big_saved_workspace(ws: Path) -> Memory:
    """Two files of 3,000 like definitions each, indexed, saved, and opened again (mapped)."""
    write(ws, {f"big{i}.py": "".join(f"def f_{i}_{k}(x):\n    return x * {k}\n" for k in range(3000))
               for i in range(2)})
    built(ws).close()  # saved: the next start maps the shards
    return built(ws)


def test_touched_shard_pages_are_unmapped_when_the_indexer_is_idle(ws):
    mem = big_saved_workspace(ws)
    for shard, _ in mem.stores[0].view().shards:
        assert int(np.asarray(shard.ids, np.int64).sum()) >= 0  # every page of ids touched
    assert mapped_kb(ws) > 0
    assert mem.settle(SETTLE_S)  # the idle pass after the reads
    assert mapped_kb(ws) < 64
    assert texts(mem, "def g(x):\n    return x * 2999\n\ndef f_1_7(x):\n    return ", "file:///x.py")  # pages come back
    mem.close()


def test_each_query_unmaps_the_shard_pages_it_touched(ws, monkeypatch):
    # a burst of queries never waits for the idle pass: without this, a few hundred of them map
    # the whole index into the daemon's RSS (573 MB at 10k files in benchmarks.memory.scale)
    monkeypatch.setattr("mercury_lsp.memory.indexer.IDLE_WAIT_S", 3600.0)
    mem = big_saved_workspace(ws)
    shard = next(s for s, _ in mem.stores[0].view().shards)
    touched = []
    real = type(shard).matches

    def spy(self, *args, **kwargs):  # what a query has mapped while it runs
        out = real(self, *args, **kwargs)
        touched.append(mapped_kb(ws))
        return out

    monkeypatch.setattr(type(shard), "matches", spy)
    doc = "def g(x):\n    return x * 2999\n\ndef f_1_7(x):\n    return "
    ctx = Context("file:///x.py", doc, len(doc), "python")
    assert mem.candidates(ctx) and max(touched) > 64
    assert mapped_kb(ws) < 64
    for ask in (lambda: mem.retrieve(ctx), lambda: mem.knows({"f_1_7"}), lambda: mem.definition("f_0_3")):
        assert ask() is not None and mapped_kb(ws) < 64
    mem.close()


def test_a_spent_search_budget_answers_from_what_was_read(ws, monkeypatch):
    mem = built(ws)
    doc = "def other(path):\n    with open(path) as fh:\n        return "
    assert texts(mem, doc, "file:///x.py") == ["parse_config(fh.read(), strict=True)"]
    monkeypatch.setattr("mercury_lsp.memory.service.SEARCH_BUDGET_S", 0.0)  # a machine far too slow
    assert texts(mem, doc, "file:///x.py") == []  # the files on disk were not reached
    echo = doc + "parse_it(fh)\n\ndef again(path):\n    with open(path) as fh:\n        return "
    assert texts(mem, echo, "file:///x.py") == ["parse_it(fh)"]  # the document always is
    mem.close()

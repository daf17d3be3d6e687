"""The pinned PyPI corpus: the lock, hash checks, wheels and sdists, licences from their
metadata, provenance and exact token counts. Archives are made in the test; fetches read
``file://`` URLs, so nothing touches the network."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mercury_train import pins as pins_mod
from mercury_train.corpus_v2 import TOKENIZER, archive_source, build_pinned, select_pins, tokenize
from mercury_train.decontam import ContaminationIndex
from mercury_train.pins import Pin, PinError, archive_metadata, fetch, load_lock, python_members, save_lock

BODY = "".join(f"def function_{i}(value):\n    return value * {i} + {i % 7}\n\n" for i in range(30))


def _wheel(path: Path, name: str, version: str, licence: str, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{name}-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{licence}\n")
        for rel, text in files.items():
            zf.writestr(rel, text)
    return path


def _sdist(path: Path, name: str, version: str, licence: str, files: dict[str, str]) -> Path:
    top = f"{name}-{version}"
    with tarfile.open(path, "w:gz") as tf:
        members = {"PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{licence}\n", **files}
        for rel, text in members.items():
            raw = text.encode()
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size = len(raw)
            tf.addfile(info, io.BytesIO(raw))
    return path


def _pin(spec: str, archive: Path) -> Pin:
    return Pin(spec, archive.name, archive.as_uri(), hashlib.sha256(archive.read_bytes()).hexdigest(), "")


@pytest.fixture
def index_dir(tmp_path) -> Path:
    src = tmp_path / "index"
    src.mkdir()
    return src


def test_fetch_downloads_once_and_refuses_a_changed_file(tmp_path, index_dir):
    whl = _wheel(index_dir / "good-1.0-py3-none-any.whl", "good", "1.0", "License-Expression: MIT",
                 {"good/a.py": BODY})
    pin = _pin("good==1.0", whl)
    cache = tmp_path / "cache"
    assert fetch(pin, cache).read_bytes() == whl.read_bytes()
    (cache / whl.name).write_bytes(b"tampered")
    with pytest.raises(PinError, match="sha256"):
        fetch(pin, cache)


def test_lock_round_trip_and_selection(tmp_path):
    a = Pin("b-pkg==2.0", "b_pkg-2.0.tar.gz", "file:///x", "0" * 64, "MIT")
    b = Pin("A==1.0", "a-1.0-py3-none-any.whl", "file:///y", "1" * 64, "BSD-3-Clause")
    lock = tmp_path / "lock.json"
    save_lock([a, b], lock)
    assert load_lock(lock) == [b, a]  # sorted by name
    assert select_pins(["b-pkg==2.0"], [a, b]) == [a]
    with pytest.raises(PinError, match="c==3.0"):
        select_pins(["c==3.0"], [a, b])


def test_the_shipped_lock_pins_every_file_by_hash():
    pins = load_lock()
    assert len(pins) >= 100 and len({p.spec.split("==")[0].lower() for p in pins}) == len(pins)
    for p in pins:
        assert "==" in p.spec and len(p.sha256) == 64 and p.url.startswith(pins_mod.FILES_HOST)
        assert p.file.endswith((".whl", ".tar.gz")) and p.license


def test_sdist_and_wheel_members_and_metadata(index_dir):
    sd = _sdist(index_dir / "s-2.0.tar.gz", "s", "2.0", "License: Apache-2.0",
                {"src/s/core.py": BODY, "README.md": "hi"})
    assert python_members(sd) == {"src/s/core.py": BODY.encode()}
    assert archive_metadata(sd)["License"] == "Apache-2.0"
    whl = _wheel(index_dir / "w-1.0-py3-none-any.whl", "w", "1.0", "License-Expression: MIT",
                 {"w/a.py": BODY, "w-1.0.dist-info/x.py": "no"})
    assert set(python_members(whl)) == {"w/a.py"}


def test_mirror_addresses_become_the_file_host():
    tail = "8a/4c/34f0/accelerate-1.15.0-py3-none-any.whl"
    assert pins_mod.canonical_url(f"https://pypi.org/packages/packages/{tail}") == pins_mod.FILES_HOST + tail
    assert pins_mod.canonical_url(pins_mod.FILES_HOST + tail) == pins_mod.FILES_HOST + tail


def test_choose_prefers_a_pure_wheel_then_linux_then_the_sdist():
    files = [{"filename": "p-1.tar.gz"}, {"filename": "p-1-cp311-cp311-manylinux_2_28_x86_64.whl"},
             {"filename": "p-1-py3-none-any.whl"}, {"filename": "p-1-cp311-cp311-win_amd64.whl"}]
    assert pins_mod._choose(files)["filename"] == "p-1-py3-none-any.whl"
    assert pins_mod._choose(files[:2])["filename"].endswith("x86_64.whl")
    assert pins_mod._choose(files[:1])["filename"] == "p-1.tar.gz"
    assert pins_mod._choose([]) is None


def test_build_pinned_reads_licences_and_records_provenance(tmp_path, index_dir):
    stdlib = tmp_path / "stdlib"
    (stdlib / "json").mkdir(parents=True)
    (stdlib / "json" / "x.py").write_text("import re\n\n" + BODY.replace("value", "s"))
    good = _wheel(index_dir / "good-1.0-py3-none-any.whl", "good", "1.0", "License-Expression: BSD-3-Clause", {
        "good/core.py": "import os\n\n" + BODY, "good/tests/test_core.py": "def test_x():\n    pass\n" * 10,
        "good/copy.py": "import re\n\n" + BODY.replace("value", "s") + "\n\n",  # the stdlib file again
        **{f"good/m{i}.py": f"class T{i}:\n" + BODY.replace("value", f"v{i}") for i in range(12)}})
    sdist = _sdist(index_dir / "tarred-3.1.tar.gz", "tarred", "3.1",
                   "Classifier: License :: OSI Approved :: MIT License", {"tarred/t.py": BODY.replace("value", "q")})
    gpl = _wheel(index_dir / "bad-0.1-py3-none-any.whl", "bad", "0.1", "License: GPL-3.0-or-later",
                 {"bad/a.py": BODY.replace("value", "z")})
    pins = [_pin("good==1.0", good), _pin("tarred==3.1", sdist), _pin("bad==0.1", gpl)]
    cache, out = tmp_path / "cache", tmp_path / "out"
    assert archive_source(pins[2], cache)[0] is None
    train, held, report = build_pinned(out, ContaminationIndex.load(None), 2, pins, cache,
                                       builder="pypi-v2", stdlib_root=stdlib, heldout_frac=0.2)
    assert report.refused == {"bad==0.1": "GPL-3.0-or-later"}
    assert set(report.sources) == {"stdlib", "good==1.0", "tarred==3.1"}
    assert report.sources["tarred==3.1"]["license"] == "MIT License"
    assert report.dropped_tests == 1 and report.dropped_duplicates == 1
    docs = train + held
    assert len(docs) == 1 + 13 + 1 and all(d["source"] != "bad==0.1" for d in docs)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["builder"] == "pypi-v2" and manifest["packages"] == ["good==1.0", "tarred==3.1"]
    assert {p["spec"]: p["sha256"] for p in manifest["pins"]} == {p.spec: p.sha256 for p in pins[:2]}

    per_source: Counter = Counter()
    stream = tokenize(docs, TOKENIZER.read_text(encoding="utf-8"), per_source)
    assert stream.dtype == np.uint16 and sum(per_source.values()) == stream.size
    assert set(per_source) == {"stdlib", "good==1.0", "tarred==3.1"}


def test_files_a_tool_wrote_are_dropped():
    from mercury_train.corpus import looks_generated

    assert looks_generated("# Code generated by aaz-dev-tools\n# DO NOT EDIT\n" + BODY)
    assert looks_generated("# Generated by the protocol buffer compiler.  DO NOT EDIT!\n" + BODY)
    assert not looks_generated("# This module turns generated code into text.\n" + BODY)


def test_pinning_adds_permissive_packages_only(tmp_path, monkeypatch, capsys):
    licences = {"okpkg": "BSD-3-Clause", "gplpkg": "GPL-3.0-only"}

    def fake_resolve(req: str, cache: Path) -> Pin:  # PyPI's answer, without the network
        name = req.split("==")[0]
        return Pin(f"{name}==1.0", f"{name}-1.0-py3-none-any.whl", pins_mod.FILES_HOST + "x", "2" * 64, licences[name])

    monkeypatch.setattr(pins_mod, "resolve", fake_resolve)
    lock = tmp_path / "lock.json"
    assert pins_mod.main(["okpkg", "gplpkg", "--lock", str(lock), "--cache", str(tmp_path)]) == 0
    assert [p.spec for p in load_lock(lock)] == ["okpkg==1.0"]
    assert "gplpkg==1.0: refused" in capsys.readouterr().err

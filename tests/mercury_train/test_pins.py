"""The pinned PyPI packages (mercury_train/pins.py): the lock, hash checks, wheels and sdists,
licences from their metadata. Archives are made in the test; fetches read ``file://`` URLs, so
nothing touches the network."""

from __future__ import annotations

from pathlib import Path

import pytest

from mercury_train import pins as pins_mod
from mercury_train.corpus_v2 import select_pins
from mercury_train.pins import Pin, PinError, archive_metadata, fetch, load_lock, python_members, save_lock
from tests.support.archives import BODY, make_sdist, make_wheel, pin_to


def test_fetch_downloads_once_and_refuses_a_changed_file(tmp_path, index_dir):
    whl = make_wheel(index_dir / "good-1.0-py3-none-any.whl", "good", "1.0", "License-Expression: MIT",
                     {"good/a.py": BODY})
    pin = pin_to("good==1.0", whl)
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
    sd = make_sdist(index_dir / "s-2.0.tar.gz", "s", "2.0", "License: Apache-2.0",
                    {"src/s/core.py": BODY, "README.md": "hi"})
    assert python_members(sd) == {"src/s/core.py": BODY.encode()}
    assert archive_metadata(sd)["License"] == "Apache-2.0"
    whl = make_wheel(index_dir / "w-1.0-py3-none-any.whl", "w", "1.0", "License-Expression: MIT",
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

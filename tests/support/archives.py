"""Package archives made in a test (wheels, sdists) and pins to them, read through ``file://``
URLs: the corpus builders' tests touch no network."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

from mercury_train.pins import Pin

BODY = "".join(f"def function_{i}(value):\n    return value * {i} + {i % 7}\n\n" for i in range(30))


def make_wheel(path: Path, name: str, version: str, licence: str, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{name}-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{licence}\n")
        for rel, text in files.items():
            zf.writestr(rel, text)
    return path


def make_sdist(path: Path, name: str, version: str, licence: str, files: dict[str, str]) -> Path:
    top = f"{name}-{version}"
    with tarfile.open(path, "w:gz") as tf:
        members = {"PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{licence}\n", **files}
        for rel, text in members.items():
            raw = text.encode()
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size = len(raw)
            tf.addfile(info, io.BytesIO(raw))
    return path


def pin_to(spec: str, archive: Path) -> Pin:
    return Pin(spec, archive.name, archive.as_uri(), hashlib.sha256(archive.read_bytes()).hexdigest(), "")

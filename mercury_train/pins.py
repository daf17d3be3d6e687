"""Pinned source archives for the PyPI corpora: name==version, one file, its SHA-256.

The lock (``corpus_v2.lock.json`` beside this file) names, for each package, exactly one file
of one release (a pure-Python wheel when there is one, else a wheel, else the sdist), where it
was downloaded from and its SHA-256. ``fetch`` downloads a file once into a cache and refuses
one whose hash differs, so a corpus built from the lock is the same on every machine.

    python -m mercury_train.pins NAME[==VERSION] ...     resolve and add to the lock (network)

A package is added only when the licence in its own metadata (mercury_train/corpus.py's
allow-list) is permissive; the refused ones are printed with their licence.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tarfile
import urllib.request
import zipfile
from dataclasses import asdict, dataclass
from email.message import Message
from email.parser import Parser
from pathlib import Path
from urllib.parse import urljoin

from mercury_train.corpus import is_permissive, license_text

LOCK = Path(__file__).with_name("corpus_v2.lock.json")
PYPI_JSON = "https://pypi.org/pypi/{name}/json"
FILES_HOST = "https://files.pythonhosted.org/packages/"  # where PyPI serves every release file
DOWNLOAD_TIMEOUT_S = 120  # one archive; the largest pinned ones are ~60 MB


class PinError(RuntimeError):
    """A pinned file is missing from the index, or its bytes do not hash to the pin."""


@dataclass(frozen=True)
class Pin:
    spec: str  # "name==version"
    file: str  # the archive's file name on PyPI
    url: str
    sha256: str
    license: str  # as read from the archive's metadata when it was pinned (re-read at build)


def load_lock(path: Path = LOCK) -> list[Pin]:
    return [Pin(**p) for p in json.loads(path.read_text())["pins"]]


def save_lock(pins: list[Pin], path: Path = LOCK) -> None:
    body = {"about": "mercury_train/pins.py: one archive per package, verified by SHA-256",
            "pins": [asdict(p) for p in sorted(pins, key=lambda p: p.spec.lower())]}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(body, indent=1) + "\n")
    tmp.replace(path)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(pin: Pin, cache: Path) -> Path:
    """The pinned archive in ``cache`` (downloaded when absent); its hash is always checked."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / pin.file
    if not path.exists():
        tmp = path.with_name(path.name + ".part")
        with urllib.request.urlopen(pin.url, timeout=DOWNLOAD_TIMEOUT_S) as resp, open(tmp, "wb") as fh:
            while block := resp.read(1 << 20):
                fh.write(block)
        tmp.replace(path)
    got = sha256_file(path)
    if got != pin.sha256:
        raise PinError(f"{pin.file}: sha256 {got} differs from the pinned {pin.sha256}")
    return path


# ---------------------------------------------------------------------------- archives
def _is_sdist(path: Path) -> bool:
    return path.name.endswith(".tar.gz")


def archive_metadata(path: Path) -> Message:
    """The METADATA of a wheel or the top-level PKG-INFO of an sdist."""
    if _is_sdist(path):
        with tarfile.open(path) as tf:
            member = min((m for m in tf.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")),
                         key=lambda m: m.name, default=None)
            if member is None:
                raise PinError(f"{path.name}: no PKG-INFO")
            raw = tf.extractfile(member).read()
    else:
        with zipfile.ZipFile(path) as zf:
            name = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
            if name is None:
                raise PinError(f"{path.name}: no .dist-info/METADATA")
            raw = zf.read(name)
    return Parser().parsestr(raw.decode("utf-8", "replace"))


def python_members(path: Path) -> dict[str, bytes]:
    """Every ``.py`` file of the archive by its path inside the package (an sdist's top
    directory and a wheel's .dist-info dropped)."""
    out: dict[str, bytes] = {}
    if _is_sdist(path):
        with tarfile.open(path) as tf:
            for m in tf.getmembers():
                if m.isfile() and m.name.endswith(".py") and "/" in m.name:
                    out[m.name.split("/", 1)[1]] = tf.extractfile(m).read()
    else:
        with zipfile.ZipFile(path) as zf:
            for n in zf.namelist():
                if n.endswith(".py") and ".dist-info/" not in n:
                    out[n] = zf.read(n)
    return out


# ---------------------------------------------------------------------------- resolving (network)
def _choose(files: list[dict]) -> dict | None:
    """One archive of a release: a pure wheel, else a CPython x86-64 Linux wheel, else the sdist."""
    wheels = [f for f in files if f["filename"].endswith(".whl") and not f.get("yanked")]
    for pred in (lambda n: n.endswith("-none-any.whl"), lambda n: "manylinux" in n and "x86_64" in n):
        hits = sorted((f for f in wheels if pred(f["filename"])), key=lambda f: f["filename"])
        if hits:
            return hits[-1]
    sdists = [f for f in files if f["filename"].endswith(".tar.gz")]
    return sdists[0] if sdists else None


def canonical_url(url: str) -> str:
    """A release file's address on PyPI's file host (a mirror may answer with its own form,
    ``.../packages/packages/<hash path>``; the hash path is the same)."""
    _, sep, tail = url.rpartition("/packages/")
    return FILES_HOST + tail if sep else url


def resolve(requirement: str, cache: Path) -> Pin:
    """Pin ``name`` (its newest release) or ``name==version`` from PyPI's JSON API."""
    name, _, version = requirement.partition("==")
    api = PYPI_JSON.format(name=name)
    with urllib.request.urlopen(api, timeout=DOWNLOAD_TIMEOUT_S) as resp:
        info = json.load(resp)
    version = version or info["info"]["version"]
    chosen = _choose(info["releases"].get(version, []))
    if chosen is None:
        raise PinError(f"{name}=={version}: no wheel or sdist on PyPI")
    pin = Pin(f"{name}=={version}", chosen["filename"], canonical_url(urljoin(api, chosen["url"])),
              chosen["digests"]["sha256"], "")
    lic = license_text(archive_metadata(fetch(pin, cache)))
    return Pin(pin.spec, pin.file, pin.url, pin.sha256, lic)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("requirements", nargs="+")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "mercury-lsp" / "wheels-v2")
    ap.add_argument("--lock", type=Path, default=LOCK)
    args = ap.parse_args(argv)
    pins = {p.spec.split("==")[0].lower(): p for p in (load_lock(args.lock) if args.lock.exists() else [])}
    for req in args.requirements:
        try:
            pin = resolve(req, args.cache)
        except (PinError, OSError, KeyError) as exc:
            print(f"{req}: not pinned: {exc}", file=sys.stderr)
            continue
        if not is_permissive(pin.license):
            print(f"{pin.spec}: refused, licence {pin.license!r}", file=sys.stderr)
            continue
        pins[pin.spec.split("==")[0].lower()] = pin
        print(f"{pin.spec:<40} {pin.license[:50]:<50} {pin.file}")
        save_lock(list(pins.values()), args.lock)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

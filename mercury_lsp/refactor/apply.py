"""Writing the new texts: atomic per file, checked, optionally all or nothing.

Each new text is written to a temporary file in the target's directory (an unnamed ``O_TMPFILE``
inode where the kernel offers one, so a crash before the last step leaves nothing behind),
flushed with ``fsync``, given the target's permission bits, linked under a hidden name and
renamed over the target (``os.replace``: readers see the old or the new file, never a mix),
then the directory is fsynced. Just before the rename the target's bytes are hashed again: a
file that changed since it was read is skipped with a warning. A read-only file is refused. A
symbolic link, or a path whose real location is outside ``root`` (the repository), is skipped
with a note, checked before the temporary is written and again just before the rename (which
replaces a name, never writes through one).

``atomic_all``: every file is checked and its temporary written first; if any is refused, none
is replaced. (Renames of several files cannot be one atomic step on POSIX; between the last
check and the renames there is no user-visible window beyond the renames themselves.)

A process killed between linking a temporary and renaming it leaves ``.<name>.mercury-<pid>``;
``sweep`` removes such files whose process is gone (every ``--apply`` run sweeps first).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mercury_lsp.refactor.changes import FileChange
from mercury_lsp.refactor.files import sha256, unsafe

TMP_MARK = ".mercury-"
TMP_NAME = re.compile(r"^\..+\.mercury-(\d+)(?:-\w+)?$")


@dataclass
class ApplyResult:
    applied: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)  # bad input (read-only...)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # changed since read: warnings
    not_applied: list[Path] = field(default_factory=list)  # held back by atomic_all


@dataclass
class _Pending:
    change: FileChange
    fd: int
    named: str | None  # path of a named temporary (no O_TMPFILE)


def _read_only(path: Path) -> bool:
    st = path.stat()
    return not (st.st_mode & stat.S_IWUSR) or not os.access(path, os.W_OK)


def _write_temp(change: FileChange, unnamed: bool = True) -> _Pending:
    path = change.source.path
    data = change.new_text.encode("utf-8")
    mode = stat.S_IMODE(path.stat().st_mode)
    fd, named = -1, None
    if unnamed and hasattr(os, "O_TMPFILE"):
        with contextlib.suppress(OSError):
            fd = os.open(path.parent, os.O_TMPFILE | os.O_WRONLY, mode)
    if fd < 0:
        fd, named = tempfile.mkstemp(prefix=f".{path.name}{TMP_MARK}{os.getpid()}-", dir=path.parent)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        if named is not None:
            with contextlib.suppress(OSError):
                os.unlink(named)
        raise
    return _Pending(change, fd, named)


def _discard(p: _Pending) -> None:
    os.close(p.fd)
    if p.named is not None:
        with contextlib.suppress(OSError):
            os.unlink(p.named)


def _replace(p: _Pending) -> None:
    path = p.change.source.path
    tmp = p.named
    if tmp is None:  # give the unnamed inode a hidden name next to the target, then rename it
        tmp = str(path.parent / f".{path.name}{TMP_MARK}{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        try:
            _link_fd(p.fd, tmp)
        except OSError:  # no /proc, or a file system that refuses: a named temporary instead
            os.close(p.fd)
            p = _write_temp(p.change, unnamed=False)
            tmp = p.named
    os.close(p.fd)
    os.replace(tmp, path)
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _link_fd(fd: int, dest: str) -> None:
    """Give an ``O_TMPFILE`` inode a name: linkat through ``/proc/self/fd`` (no privilege needed)."""
    proc = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.link(str(fd), dest, src_dir_fd=proc, follow_symlinks=True)
    finally:
        os.close(proc)


def _outside(path: Path, root: Path | None) -> str | None:
    """Why ``path`` must not be written (a symbolic link, a real location outside ``root``)."""
    return unsafe(path, root if root is not None else path.absolute().parent)


def _unchanged(change: FileChange) -> bool:
    try:
        return sha256(change.source.path.read_bytes()) == change.source.sha256
    except OSError:
        return False


def _prepare(change: FileChange, result: ApplyResult, root: Path | None) -> _Pending | None:
    path = change.source.path
    if (why := _outside(path, root)) is not None:
        result.skipped.append((path, why))
        return None
    try:
        if _read_only(path):
            result.refused.append((path, "read-only file"))
            return None
        return _write_temp(change)
    except OSError as exc:
        result.refused.append((path, f"cannot write: {exc.strerror or exc}"))
        return None


def apply_changes(changes: list[FileChange], atomic_all: bool = False, root: Path | None = None) -> ApplyResult:
    """Write the changed files; ``root``: the repository, nothing outside it is written (None:
    each file's own directory, so a symbolic link or a path through one is still refused)."""
    result = ApplyResult()
    todo = [c for c in changes if c.changed and c.new_text != c.source.text]
    if not atomic_all:
        for c in todo:
            p = _prepare(c, result, root)
            if p is None:
                continue
            if (why := _stale(c, root)) is not None:
                _discard(p)
                result.skipped.append((c.source.path, why))
                continue
            _replace_or_refuse(p, result)
        return result
    pending = []
    for c in todo:
        p = _prepare(c, result, root)
        if p is not None:
            pending.append(p)
    for p in pending:
        if (why := _stale(p.change, root)) is not None:
            result.skipped.append((p.change.source.path, why))
    if result.refused or result.skipped:
        for p in pending:
            _discard(p)
        blocked = {q for q, _ in result.refused + result.skipped}
        result.not_applied = [c.source.path for c in todo if c.source.path not in blocked]
        return result
    for p in pending:
        _replace_or_refuse(p, result)
    return result


def _stale(change: FileChange, root: Path | None) -> str | None:
    """Checked just before the rename: the file became a link or moved out, or changed."""
    if (why := _outside(change.source.path, root)) is not None:
        return why
    return None if _unchanged(change) else "changed since it was read"


def _replace_or_refuse(p: _Pending, result: ApplyResult) -> None:
    try:
        _replace(p)
    except OSError as exc:
        result.refused.append((p.change.source.path, f"cannot replace: {exc.strerror or exc}"))
        return
    result.applied.append(p.change.source.path)


def sweep(directories: list[Path]) -> list[Path]:
    """Remove temporaries left by killed runs (their process is gone) in ``directories``."""
    removed = []
    for d in dict.fromkeys(directories):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            m = TMP_NAME.match(name)
            if m is None or _alive(int(m.group(1))):
                continue
            with contextlib.suppress(OSError):
                os.unlink(d / name)
                removed.append(d / name)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # a leftover of an earlier process that had this pid: we have none pending
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

"""Which files mercury-lsp never reads, sends or indexes, and where it suggests.

Two settings (``config.Settings``), one matcher for every part that touches a file's text —
completions, next edit, the workspace files next edit reads, the repository memory, and every
remote backend (nothing of an excluded file reaches one, because nothing of it leaves here):

- ``exclude``: gitignore-style globs. A file they match is private: no suggestion in it, its text
  is never put in a prompt, read from disk, indexed or logged. The defaults cover files that are
  secret by nature (``config.DEFAULT_EXCLUDE``).
- ``suggestIn``: where suggestions are shown, by language id (``"markdown": false``) or by glob
  (``"**/*.md": false``, ``"docs/**": false``). It switches suggestions only: a disabled file
  may still lend context. The user's object overlays ``config.DEFAULT_SUGGEST_IN``.

Globs match the path relative to the workspace root that holds the file (a file outside every
root: its name alone), with .gitignore's rules: a pattern without a slash matches at any depth
(``.env*`` excludes ``deploy/.env.prod``), one that matches a folder covers all beneath it
(``*secret*`` excludes ``secrets/db.yml``), ``**`` spans folders, a leading ``/`` anchors at
the root, ``!`` re-includes.

    Exclusion.from_settings(settings, roots).excludes("file:///repo/.env")  -> True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

import pathspec

from mercury_lsp.config import DEFAULT_SUGGEST_IN, Settings

ALL = "*"  # the `suggestIn` key for every file no other key names
# A key of `suggestIn` that is a language id (LSP's: "python", "javascriptreact", "objective-c");
# any other key (with * ? [ / . or capitals) is a glob.
LANGUAGE_ID = re.compile(r"[a-z0-9][a-z0-9_+-]*")
CACHED_PATHS = 4096  # verdicts kept per matcher (a workspace's open and scanned files)
CACHED_MATCHERS = 16  # settings x roots combinations kept (one per connection, usually)


def _path(path_or_uri: str | Path) -> PurePosixPath | None:
    """A file's path from a path or a URI (file:, or another scheme's path); None for untitled."""
    if isinstance(path_or_uri, Path):
        return PurePosixPath(path_or_uri.as_posix())
    text = str(path_or_uri)
    if "://" in text or text.startswith(("untitled:", "file:")):
        parsed = urlparse(text)
        if parsed.scheme == "untitled" or not parsed.path:
            return None
        return PurePosixPath(unquote(parsed.path))
    return PurePosixPath(Path(text).as_posix())


class Exclusion:
    """The ``exclude`` and ``suggestIn`` settings, for one set of workspace roots."""

    def __init__(self, exclude: Iterable[str], suggest_in: Mapping[str, bool], roots: Sequence[Path | str] = ()) -> None:
        self._exclude = pathspec.GitIgnoreSpec.from_lines(list(exclude))
        merged = {**DEFAULT_SUGGEST_IN, **suggest_in}
        self._languages = {k: v for k, v in merged.items() if LANGUAGE_ID.fullmatch(k)}
        self._default = merged.get(ALL, True)
        # Globs in the order given: the last one matching a file decides (as .gitignore lines do).
        self._globs = [(pathspec.GitIgnoreSpec.from_lines([k]), v) for k, v in merged.items()
                       if k != ALL and k not in self._languages]
        # Longest root first: a file in nested roots is matched relative to the innermost.
        self._roots = sorted((PurePosixPath(Path(r).as_posix()) for r in roots), key=lambda r: -len(r.parts))
        self._verdicts: dict[str, bool] = {}

    @classmethod
    def from_settings(cls, settings: Settings, roots: Sequence[Path | str] = ()) -> Exclusion:
        return _cached(tuple(settings.exclude), tuple(settings.suggest_in.items()), tuple(str(r) for r in roots))

    def relative(self, path_or_uri: str | Path) -> str | None:
        """The path globs match: relative to the innermost root holding it, else the file name."""
        path = _path(path_or_uri)
        if path is None:
            return None
        for root in self._roots:
            if path.is_relative_to(root) and path != root:
                return path.relative_to(root).as_posix()
        return path.name or None

    def excludes(self, path_or_uri: str | Path) -> bool:
        """True for a file that must never be read, sent, indexed or logged."""
        key = str(path_or_uri)
        hit = self._verdicts.get(key)
        if hit is None:
            rel = self.relative(path_or_uri)
            hit = rel is not None and self._exclude.match_file(rel)
            if len(self._verdicts) >= CACHED_PATHS:
                self._verdicts.clear()
            self._verdicts[key] = hit
        return hit

    def enabled(self, path_or_uri: str | Path, language_id: str | None = None) -> bool:
        """True where suggestions are shown: not excluded, and ``suggestIn`` allows it (the last
        matching glob, else the language id, else ``"*"``)."""
        if self.excludes(path_or_uri):
            return False
        rel = self.relative(path_or_uri)
        verdict = None
        if rel is not None:
            for spec, value in self._globs:
                if spec.match_file(rel):
                    verdict = value
        if verdict is None and language_id is not None:
            verdict = self._languages.get(language_id)
        return self._default if verdict is None else verdict


@lru_cache(maxsize=CACHED_MATCHERS)
def _cached(exclude: tuple[str, ...], suggest_in: tuple[tuple[str, bool], ...], roots: tuple[str, ...]) -> Exclusion:
    return Exclusion(exclude, dict(suggest_in), roots)

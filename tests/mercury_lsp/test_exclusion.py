"""The content-exclusion matcher (mercury_lsp/exclusion.py): the default globs, .gitignore's
rules relative to the workspace root, and ``suggestIn`` by language id and by glob."""

from __future__ import annotations

import pytest

from mercury_lsp.config import DEFAULT_EXCLUDE, Settings, parse_settings
from mercury_lsp.exclusion import Exclusion

ROOT = "/work/proj"


def _default(*roots: str) -> Exclusion:
    return Exclusion.from_settings(Settings(), roots or (ROOT,))


@pytest.mark.parametrize("path", [
    ".env", ".env.local", "deploy/.env.production", "prod.env", ".envrc", ".dev.vars",
    "certs/server.pem", "tls/server.key", "ca.crt", "keystore.jks", "store.p12", "putty.ppk",
    "home/.ssh/id_rsa", "id_ed25519.pub", "passwords.kdbx", ".netrc", ".npmrc", ".pypirc",
    ".git-credentials", "config/.aws/credentials", "secrets.yml", "client_secret.json",
    "secrets/db.py", "infra/terraform.tfstate", "infra/prod.tfvars", "x/.ssh/config",
])
def test_default_globs_exclude_secret_files(path):
    assert _default().excludes(f"file://{ROOT}/{path}")


@pytest.mark.parametrize("path", [
    "src/app.py", "main.go", "README.md", "keyboard.py", "environment.py", "src/envs.ts",
    "tests/test_keys.py", "package.json", "Cargo.lock", "docs/certificate_guide.txt",
])
def test_default_globs_leave_source_files_alone(path):
    assert not _default().excludes(f"file://{ROOT}/{path}")


def test_globs_match_inside_the_root_not_the_folders_above_it():
    # `*secret*` must not exclude a whole project that happens to live under /home/secretary.
    e = _default("/home/secretary/proj")
    assert not e.excludes("file:///home/secretary/proj/app.py")
    assert e.excludes("file:///home/secretary/proj/secret_keys.py")
    # Outside every root: the file name alone is matched.
    assert e.excludes("/elsewhere/.env") and not e.excludes("/tmp/secretary/app.py")


def test_paths_uris_and_untitled_documents():
    e = _default()
    assert e.excludes(f"{ROOT}/.env") and e.excludes(f"file://{ROOT}/a%20b/.env")
    assert not e.excludes("untitled:Untitled-1")


def test_nested_roots_match_relative_to_the_innermost():
    e = Exclusion(["/generated/"], {}, ["/repo", "/repo/sub"])
    assert e.excludes("/repo/generated/x.py") and e.excludes("/repo/sub/generated/x.py")
    assert not e.excludes("/repo/sub/src/generated.py")


def test_user_globs_replace_the_defaults_with_gitignore_rules():
    settings, problems = parse_settings({"exclude": ["*.sql", "data/**", "!data/schema.sql", "/top.txt"]})
    assert problems == []
    e = Exclusion.from_settings(settings, [ROOT])
    assert e.excludes(f"{ROOT}/dump.sql") and e.excludes(f"{ROOT}/data/a/b.csv")
    assert not e.excludes(f"{ROOT}/data/schema.sql")  # re-included
    assert e.excludes(f"{ROOT}/top.txt") and not e.excludes(f"{ROOT}/sub/top.txt")  # anchored
    assert not e.excludes(f"{ROOT}/.env")  # the defaults are replaced, as documented


def test_enable_by_language_and_by_glob():
    settings, problems = parse_settings({"suggestIn": {"python": False, "**/scripts/*.py": True, "docs/**": False}})
    assert problems == []
    e = Exclusion.from_settings(settings, [ROOT])
    assert not e.enabled(f"{ROOT}/app.py", "python")
    assert e.enabled(f"{ROOT}/tools/scripts/run.py", "python")  # a glob beats the language
    assert not e.enabled(f"{ROOT}/docs/conf.js", "javascript")
    assert e.enabled(f"{ROOT}/app.js", "javascript")
    # The defaults still apply beside the user's keys (prose off), and an excluded file is never enabled.
    assert not e.enabled(f"{ROOT}/notes.md", "markdown") and not e.enabled(f"{ROOT}/.env", "dotenv")


def test_enable_star_and_a_default_turned_back_on():
    e = Exclusion.from_settings(parse_settings({"suggestIn": {"*": False, "go": True, "markdown": True}})[0], [ROOT])
    assert e.enabled(f"{ROOT}/main.go", "go") and e.enabled(f"{ROOT}/README.md", "markdown")
    assert not e.enabled(f"{ROOT}/app.py", "python")


def test_the_last_matching_glob_decides():
    e = Exclusion([], {"**/*.md": False, "docs/keep/*.md": True}, [ROOT])
    assert e.enabled(f"{ROOT}/docs/keep/a.md", "markdown") and not e.enabled(f"{ROOT}/docs/a.md", "plaintext")


def test_bad_values_are_reported_and_the_defaults_kept():
    settings, problems = parse_settings({"exclude": "*.env", "suggestIn": {"python": "no"}})
    assert len(problems) == 2 and settings.exclude == list(DEFAULT_EXCLUDE)

"""The packages' structure: no import cycles in the daemon, no private names imported across its
modules, the dependency direction mercury_lsp -> mercury_engine (never back), training
(mercury_train) beside the daemon and never imported by inference, and file sizes.

File size is a smell, not a law (issue #25): files are split by meaning, never to fit a number.
Past ``SMELL_LINES`` a file must say why it is one file (``LONG_FILES``: the reason is read in
review, and a stale entry fails, so the list stays true); past ``GOD_FILE_LINES`` no reason
serves: such a file holds several concepts and is split."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mercury_lsp"
PACKAGES = ("mercury_lsp", "mercury_engine", "mercury_train")
SMELL_LINES = 400  # a file longer than this says why it is one (LONG_FILES)
GOD_FILE_LINES = 800  # twice the smell: several concepts in one file, whatever the reason
# Source files over SMELL_LINES, each with why it stays one file.
LONG_FILES: dict[str, str] = {
    "mercury_engine/fast_sampler.py": "one decoding loop over batched DecodeStates: starting a request, its block and "
                                      "full steps, the length prior's sizing and the moved context all read and write "
                                      "the same state in the same step",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import in ``path``, at module level or inside functions (a
    function-level import hides a cycle, it does not remove it), except under
    ``if TYPE_CHECKING:`` (annotations only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out.extend((a.name, []) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, [a.name for a in node.names]))
    return out


def sources() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def import_graph() -> dict[str, set[str]]:
    mods = sources()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        for target, names in imports(path):
            deps = {target} | {f"{target}.{n}" for n in names}
            for dep in deps:
                if dep in mods and dep != mod:
                    graph[mod].add(dep)
    # importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first (already running when
    # the importer is inside ``a.b``)
    for mod in mods:
        parts = mod.split(".")
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if parent not in mods:
                continue
            for importer, deps in graph.items():
                if mod in deps and importer != parent and not importer.startswith(parent + "."):
                    deps.add(parent)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := dfs(nxt)) is not None:
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := dfs(node)) is not None:
            return cycle
    return None


def test_the_check_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles_in_mercury_lsp():
    graph = import_graph()
    assert "mercury_lsp.cli.serve" in graph and graph["mercury_lsp.server.transport"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def line_counts() -> dict[str, int]:
    return {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


def test_no_god_files():
    gods = {name: n for name, n in line_counts().items() if n > GOD_FILE_LINES}
    assert not gods, gods


def test_every_long_file_says_why_it_is_one():
    counts = line_counts()
    unexplained = {name: n for name, n in counts.items() if n > SMELL_LINES and name not in LONG_FILES}
    assert not unexplained, f"split by meaning, or add the reason to LONG_FILES: {unexplained}"
    stale = [name for name in LONG_FILES if counts.get(name, 0) <= SMELL_LINES]
    assert not stale, f"no longer long (or gone): remove from LONG_FILES: {stale}"


def test_no_private_names_imported_across_modules():
    private = [(mod, target, name) for mod, path in sources().items()
               for target, names in imports(path) if target.startswith("mercury_lsp")
               for name in names if name.startswith("_") and name != "__version__"]
    assert not private, private


def test_the_engine_never_imports_the_daemon_or_training():
    for path in sorted((ROOT / "mercury_engine").rglob("*.py")):
        for target, _ in imports(path):
            assert not target.startswith(("mercury_lsp", "mercury_train")), (path, target)


def test_training_never_imports_the_daemon():
    for path in sorted((ROOT / "mercury_train").rglob("*.py")):
        for target, _ in imports(path):
            assert not target.startswith("mercury_lsp"), (path, target)

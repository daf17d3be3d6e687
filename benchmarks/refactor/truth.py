"""The ground truth of the refactor benchmark's export cases (``exports``), per language,
independent of the tree-sitter analysis it measures: a target is a name the repository defines
once (at the top of its file) and uses for nothing else, so every occurrence of it in code is the
definition's and must follow its rename. Python is read with ``ast``; Rust, Go, JavaScript and
TypeScript with a lexer of their own (``lexers``) and the statement around each occurrence, which
also gives the export form it stands in (``FORM_ORDER`` of ``exports``). A use that reads as
another thing's — a member ``x.old`` of something not a module, a local or parameter of that
name, an object key where no export list stands, another crate's or library's namesake, a
module of that name — takes the name out of the targets.
"""

from __future__ import annotations

import ast
import bisect
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.refactor.cases import Site
from benchmarks.refactor.lexers import code_only

SUFFIXES = {"python": (".py",), "rust": (".rs",), "go": (".go",), "javascript": (".js", ".mjs", ".cjs"),
            "typescript": (".ts", ".tsx", ".mts", ".cts", ".js", ".mjs")}
# Folders of built, vendored or installed code: not the repository's own source.
SKIP_DIRS = {".git", "node_modules", "dist", "build", "target", "vendor", "coverage", ".github"}
NEW_SUFFIX = {"python": "_renamed", "rust": "_renamed"}  # else (Go, JavaScript) "Renamed"
MIN_NAME = 4  # shorter names are too often words of another kind (a loop's `i`, a type's `T`)


def source_files(proj: Path, language: str) -> list[Path]:
    """The repository's own source files of ``language``: not built, vendored or installed code,
    and not generated files (Go's ``// Code generated ... DO NOT EDIT.``, ``@generated``): those are
    made again from their templates, not edited."""
    out = []
    for p in sorted(proj.rglob("*")):
        rel = p.relative_to(proj)
        if p.suffix in SUFFIXES[language] and p.is_file() and not SKIP_DIRS & set(rel.parts[:-1]) \
                and not p.name.endswith((".min.js", ".d.ts")) and not _generated(p):
            out.append(p)
    return out


GENERATED = re.compile(r"^// Code generated .* DO NOT EDIT\.$|@generated", re.M)
GENERATED_HEAD = 2048  # where the marker stands


def _generated(path: Path) -> bool:
    with path.open("rb") as f:
        return GENERATED.search(f.read(GENERATED_HEAD).decode("utf-8", "replace")) is not None


@dataclass
class Target:
    """A definition to rename and what must follow: site -> the text there, and its form."""
    language: str
    file: str  # relative to the project
    name: str
    new: str
    at: int  # code-point offset of the definition's name in its file
    expected: dict[Site, str] = field(default_factory=dict)
    forms: dict[Site, str] = field(default_factory=dict)

    @property
    def form_set(self) -> set[str]:
        return set(self.forms.values())

    @property
    def reaches(self) -> bool:
        """Some site is in another file or in an export form (its own file's export list)."""
        return bool(self.forms) or any(r != self.file for r, _, _ in self.expected)


IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


class Files:
    """The project's source files of one language: texts, code-only texts, line starts, and where
    each identifier stands in the code (``index``)."""

    def __init__(self, proj: Path, language: str) -> None:
        self.proj, self.language = proj, language
        self.texts: dict[str, str] = {}
        for p in source_files(proj, language):
            try:
                self.texts[p.relative_to(proj).as_posix()] = p.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
        self.code = {rel: code_only(t, language) for rel, t in self.texts.items()} if language != "python" else {}
        self.index: dict[str, list[tuple[str, int]]] = {}
        for rel, code in self.code.items():
            for m in IDENTIFIER.finditer(code):
                self.index.setdefault(m.group(), []).append((rel, m.start()))
        self._starts: dict[str, list[int]] = {}

    def starts(self, rel: str) -> list[int]:
        if rel not in self._starts:
            out = [0]
            for line in self.texts[rel].splitlines(keepends=True):
                out.append(out[-1] + len(line))
            self._starts[rel] = out
        return self._starts[rel]

    def site(self, rel: str, offset: int) -> Site:
        starts = self.starts(rel)
        line = max(0, bisect.bisect_right(starts, offset) - 1)
        row = self.texts[rel][starts[line]:offset]
        return rel, line, len(row.encode("utf-16-le")) // 2


def new_name(language: str, name: str) -> str:
    return name + NEW_SUFFIX.get(language, "Renamed")


def defined_once(files: Files, pattern: re.Pattern) -> list[tuple[str, str, int]]:
    """(name, file, offset) of the names ``pattern`` (its first group that matched is the name)
    finds defined exactly once in the code of all the files, in order."""
    defined: dict[str, list[tuple[str, int]]] = {}
    for rel, code in files.code.items():
        for m in pattern.finditer(code):
            g = next(k for k in range(1, (pattern.groups or 0) + 1) if m.group(k))
            defined.setdefault(m.group(g), []).append((rel, m.start(g)))
    return [(name, *defs[0]) for name, defs in sorted(defined.items()) if len(defs) == 1 and len(name) >= MIN_NAME]


# ---------------------------------------------------------------------------- Python (ast)
def _py_offset(text: str, starts: list[int], line: int, byte_col: int) -> int:
    row = text[starts[line - 1]:starts[line] if line < len(starts) else len(text)]
    return starts[line - 1] + len(row.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _all_entries(tree: ast.Module) -> list[tuple[ast.Constant, str]]:
    """The string constants of the module's ``__all__`` and the form each stands in."""
    out = []
    for n in tree.body if tree is not None else ():
        for stmt in ast.walk(n) if isinstance(n, ast.If | ast.Try) else (n,):
            form, value = None, None
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets) \
                    or isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == "__all__":
                value = stmt.value
                form = "python __all__ tuple" if isinstance(value, ast.Tuple) else "python __all__ list"
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == "__all__":
                value, form = stmt.value, "python __all__ +="
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
                    and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == "__all__":
                value, form = stmt.value, "python __all__.append"
            if value is None:
                continue
            out += [(c, form) for c in ast.walk(value) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return out


@dataclass
class PyUses:
    """Where a name stands in one module (``ast``): imported by name (with its alias), as an
    import's alias, as a ``Name``, as an attribute, in ``__all__``."""
    imports: list[tuple[ast.alias, bool]] = field(default_factory=list)  # (alias, in an __init__)
    aliases: list[ast.alias] = field(default_factory=list)
    names: list[ast.Name] = field(default_factory=list)
    attributes: list[ast.Attribute] = field(default_factory=list)
    listed: list[tuple[ast.Constant, str]] = field(default_factory=list)


def python_targets(files: Files) -> list[Target]:
    trees: dict[str, ast.Module] = {}
    for rel, text in files.texts.items():
        try:
            trees[rel] = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
    defined: dict[str, list[tuple[str, ast.AST]]] = {}
    spoiled: set[str] = set()  # names some use reads as another thing
    uses: dict[str, dict[str, PyUses]] = {}  # name -> module -> its uses there
    stars: set[str] = set()  # modules with a star import

    def at(name: str, rel: str) -> PyUses:
        return uses.setdefault(name, {}).setdefault(rel, PyUses())

    project = {part for rel in files.texts for part in Path(rel).with_suffix("").parts}  # its folders and modules
    spoiled |= project  # ``urllib3.contrib.emscripten`` is the package, not a function of that name
    for rel, tree in trees.items():
        modules = _module_locals(tree, project)
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and _root(n) not in modules:
                spoiled.add(n.attr)  # ``"...".format``, ``hypercorn.Config``: not a project module's
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.setdefault(n.name, []).append((rel, n))
            elif isinstance(n, ast.arg):
                spoiled.add(n.arg)
            elif isinstance(n, ast.keyword) and n.arg:
                spoiled.add(n.arg)
            elif isinstance(n, ast.Name):
                if isinstance(n.ctx, ast.Store):
                    spoiled.add(n.id)
                at(n.id, rel).names.append(n)
            elif isinstance(n, ast.Import):
                spoiled.update(a.asname or a.name.split(".")[0] for a in n.names)
            elif isinstance(n, ast.ImportFrom):
                for a in n.names:
                    if a.name == "*":
                        stars.add(rel)
                        continue
                    at(a.name, rel).imports.append((a, rel.endswith("__init__.py")))
                    if a.asname:
                        at(a.asname, rel).aliases.append(a)
            elif isinstance(n, ast.Attribute):
                if isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"):
                    spoiled.add(n.attr)
                at(n.attr, rel).attributes.append(n)
            elif isinstance(n, ast.Global | ast.Nonlocal):
                spoiled.update(n.names)
        for c, form in _all_entries(tree):
            at(c.value, rel).listed.append((c, form))
    out = []
    for name, defs in sorted(defined.items()):
        if len(defs) != 1 or name in spoiled or len(name) < MIN_NAME or name.startswith("__"):
            continue
        rel, node = defs[0]
        if node not in trees[rel].body or not set(uses.get(name, {})) - {rel}:
            continue
        out.append(_python_sites(files, uses[name], stars, rel, node, name))
    return [t for t in out if t.reaches]


MODULE_LOADERS = ("import_module", "importorskip")  # calls that return the module their string names


def _module_locals(tree: ast.Module, project: set[str]) -> set[str]:
    """The local names of a module that stand for one of the project's modules."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out |= {a.asname or a.name.split(".")[0] for a in n.names if a.name.split(".")[0] in project}
        elif isinstance(n, ast.ImportFrom):
            out |= {a.asname or a.name for a in n.names if a.name in project}
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and len(n.targets) == 1 \
                and isinstance(n.targets[0], ast.Name):
            fn = n.value.func
            called = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if called in MODULE_LOADERS:
                out.add(n.targets[0].id)
    return out


def _root(n: ast.expr) -> str | None:
    while isinstance(n, ast.Attribute):
        n = n.value
    return n.id if isinstance(n, ast.Name) else None


def _python_sites(files: Files, uses: dict[str, PyUses], stars: set[str], home: str, node: ast.AST,
                  name: str) -> Target:
    new = new_name("python", name)
    text, starts = files.texts[home], files.starts(home)
    keyword = "class " if isinstance(node, ast.ClassDef) else "def "
    col = text.splitlines()[node.lineno - 1].encode("utf-8").find(f"{keyword}{name}".encode()) + len(keyword)
    target = Target("python", home, name, new, _py_offset(text, starts, node.lineno, col))
    for rel, u in uses.items():
        t, st = files.texts[rel], files.starts(rel)
        for a, init in u.imports:
            form = ("python import as alias" if a.asname not in (None, name) else
                    "python re-export as itself" if a.asname == name and init else
                    "python __init__ re-export" if init else "python from-import")
            _add(files, target, rel, _py_offset(t, st, a.lineno, a.col_offset), form)
        for a in u.aliases:
            raw = t.splitlines()[a.lineno - 1].encode("utf-8")
            _add(files, target, rel, _py_offset(t, st, a.lineno, raw.rfind(name.encode(), a.col_offset, a.end_col_offset)),
                 "python re-export as itself" if rel.endswith("__init__.py") else "python from-import")
        for n in u.attributes:
            if n.end_lineno is not None:
                _add(files, target, rel, _py_offset(t, st, n.end_lineno, n.end_col_offset or 0) - len(name),
                     "python module attribute")
        star = rel != home and rel in stars and not u.imports
        for n in u.names:
            _add(files, target, rel, _py_offset(t, st, n.lineno, n.col_offset), "python star import" if star else None)
        for c, form in u.listed:
            _add(files, target, rel, _py_offset(t, st, c.lineno, c.col_offset) + 1, form)
    target.expected.pop(files.site(home, target.at), None)
    target.forms.pop(files.site(home, target.at), None)
    return target


def _add(files: Files, target: Target, rel: str, offset: int, form: str | None, text: str | None = None) -> None:
    site = files.site(rel, offset)
    target.expected[site] = text if text is not None else target.new
    if form is not None:
        target.forms[site] = form


# ---------------------------------------------------------------------------- Rust
RUST_ITEM = re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|unsafe|async|extern(?:\s+\"[^\"]*\")?)\s+)*"
                       r"(?:fn|struct|enum|trait|type|union|static|const)\s+([A-Za-z_]\w*)", re.M)
RUST_USE = re.compile(r"(?m)^[ \t]*(?:pub(?:\([^)]*\))?\s+)?use\s")
ITEM_START = re.compile(r"(?m)^[ \t]*(?:pub(?:\([^)]*\))?\s+)?(?:fn|struct|enum|trait|impl|mod|type|const|static)\b")


RUST_DECLARING = re.compile(r"\b(?:fn|struct|enum|trait|type|union|static|const|mod|let|mut|macro_rules!)\s*$")


def _path_root(code: str, o: int) -> str | None:
    """The first name of the path ``code[o]`` ends (``std`` of ``std::iter::Product``), or None."""
    m = re.search(r"((?:[A-Za-z_$][\w$]*\s*::\s*)+)$", code[max(0, o - 200):o])
    return re.match(r"[A-Za-z_$][\w$]*", m.group(1)).group() if m else None


def rust_targets(files: Files) -> list[Target]:
    # path starts that name this crate: its own name, crate/self/super, its modules (files, folders)
    local = {"crate", "self", "super", "Self", files.proj.name.replace("-", "_")} | {
        part for rel in files.code for part in Path(rel).with_suffix("").parts}
    out = []
    for name, home, at in defined_once(files, RUST_ITEM):
        if name in local:
            continue  # also a module's name: its paths are the module's
        target = Target("rust", home, name, new_name("rust", name), at)
        ok = True
        for rel, o in files.index.get(name, []):
            if o == at and rel == home:
                continue
            code = files.code[rel]
            before, after = code[max(0, o - 40):o], code[o + len(name):o + len(name) + 3].lstrip()
            if RUST_DECLARING.search(before) or before.rstrip().endswith(".") or (
                    after.startswith(("!", ":")) and not after.startswith("::")):
                ok = False  # declared again, a method, a field, a macro, a parameter or a field declaration
                break
            root = _path_root(code, o)
            if root is not None and root not in local:
                ok = False  # ``std::iter::Product``: another crate's namesake
                break
            _add(files, target, rel, o, _rust_form(code, o, rel != home))
        if ok and target.reaches:
            out.append(target)
    return out


def _rust_form(code: str, o: int, other_file: bool) -> str | None:
    head = code[code.rfind(";", 0, o) + 1:o]
    uses = list(RUST_USE.finditer(head))
    if uses and not ITEM_START.search(head, uses[-1].end()):
        stmt = head[uses[-1].start():].lstrip()
        return "rust pub use" if stmt.startswith("pub") else "rust use"
    if code[:o].rstrip().endswith("::"):
        return "rust path"
    return None


# ---------------------------------------------------------------------------- Go
GO_DEF = re.compile(r"^(?:func\s+([A-Z]\w*)\s*[\[(]|type\s+([A-Z]\w*)\b|(?:var|const)\s+([A-Z]\w*)\b)", re.M)
GO_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)
GO_IMPORT = re.compile(r'^\s*(?:import\s+)?(\w+|\.|_)?\s*"([^"]+)"\s*$', re.M)
GO_MODULE = re.compile(r"^module\s+(\S+)", re.M)
GO_METHOD = re.compile(r"\bfunc\s*\([^)]*\)\s*$")  # a method's name follows its receiver


def _go_imports(text: str) -> dict[str, str]:
    """Import path -> the name it gives (its alias, or its last element)."""
    out = {}
    for block in re.finditer(r"^import\s*\((.*?)^\)|^import\s+[^\n(]+$", text, re.M | re.S):
        for m in GO_IMPORT.finditer(block.group(1) if block.group(1) is not None else block.group(0)):
            out[m.group(2)] = m.group(1) or m.group(2).rsplit("/", 1)[-1]
    return out


def go_targets(files: Files) -> list[Target]:
    mod = files.proj / "go.mod"
    module = GO_MODULE.search(mod.read_text(encoding="utf-8")).group(1) if mod.is_file() else ""
    package = {rel: (m.group(1) if (m := GO_PACKAGE.search(code)) else "") for rel, code in files.code.items()}
    imports = {rel: _go_imports(text) for rel, text in files.texts.items()}
    out = []
    for name, home, at in defined_once(files, GO_DEF):
        folder = str(Path(home).parent)
        path = module if folder == "." else f"{module}/{folder}"
        target = Target("go", home, name, new_name("go", name), at)
        ok = True
        for rel, o in files.index.get(name, []):
            if rel == home and o == at:
                continue
            code = files.code[rel]
            same = str(Path(rel).parent) == folder and package[rel] == package[home]
            alias = imports[rel].get(path)
            before = code[max(0, o - 80):o].rstrip()
            after = code[o + len(name):o + len(name) + 3].lstrip()
            qualifier = re.search(r"(\w+)\s*\.$", before)
            if GO_METHOD.search(before) or after.startswith(":") and not after.startswith(":=") or after.startswith(":="):
                ok = False  # a method, a field key, a label or a local of that name: another thing's
                break
            if qualifier is not None and alias is not None and qualifier.group(1) == alias and not same:
                _add(files, target, rel, o, "go qualified")
            elif qualifier is None and (same or alias == "."):
                _add(files, target, rel, o, "go package file" if rel != home else None)
            else:
                ok = False  # a method or field of that name, or another package's namesake
                break
        if ok and target.reaches:
            out.append(target)
    return out


# ---------------------------------------------------------------------------- JavaScript, TypeScript
JS_DEF = re.compile(r"^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:async\s+)?(?:function\*?|class|const|let|var|"
                    r"interface|type|enum|abstract\s+class)\s+([A-Za-z_$][\w$]*)", re.M)
NAMESPACE = re.compile(r"import\s+\*\s+as\s+([\w$]+)|import\s+([\w$]+)\s*(?:,|\s+from)|"
                       r"(?:const|let|var)\s+([\w$]+)\s*=\s*require\(")
SOURCE_EXTENSION = re.compile(r"\.(?:[cm]?[jt]sx?)$")


def _enclosing_brace(code: str, o: int) -> int:
    depth = 0
    for k in range(o - 1, -1, -1):
        c = code[k]
        if c == "}":
            depth += 1
        elif c == "{":
            if depth == 0:
                return k
            depth -= 1
    return -1


def _matching_brace(code: str, b: int) -> int:
    depth = 0
    for k in range(b, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code)


def _resolves_to(rel: str, spec: str, home: str) -> bool:
    """A relative specifier naming the defining file (any extension, or its folder's index)."""
    if not spec.startswith("."):
        return False
    stem = SOURCE_EXTENSION.sub("", posixpath.normpath(posixpath.join(posixpath.dirname(rel), spec)))
    return SOURCE_EXTENSION.sub("", home) in (stem, stem + "/index")


JS_DECLARING = re.compile(r"(?<![\w$.])(?:function\*?|class|const|let|var|interface|type|enum)\s+$")


def js_targets(files: Files) -> list[Target]:
    namespaces: dict[str, set[str]] = {}

    def spaces(rel: str) -> set[str]:
        if rel not in namespaces:
            namespaces[rel] = {g for m in NAMESPACE.finditer(files.code[rel]) for g in m.groups() if g}
        return namespaces[rel]

    out = []
    for name, home, at in defined_once(files, JS_DEF):
        target = Target(files.language, home, name, new_name(files.language, name), at)
        ok = True
        for rel, o in files.index.get(name, []):
            if rel == home and o == at:
                continue
            code = files.code[rel]
            if JS_DECLARING.search(code[max(0, o - 40):o]):
                ok = False  # declared again
                break
            form, text = _js_form(files, rel, code, o, name, home, spaces(rel))
            if form == "other":
                ok = False
                break
            _add(files, target, rel, o, form, text.format(new=target.new) if text else None)
        if ok and target.reaches:
            out.append(target)
    return out


def _js_form(files: Files, rel: str, code: str, o: int, name: str, home: str,
             spaces: set[str]) -> tuple[str | None, str | None]:
    """(form, expected text with ``{new}``) of an occurrence; form "other" when it reads as
    another thing's name (the name is then no target)."""
    before, after = code[:o].rstrip(), code[o + len(name):].lstrip()
    if before.endswith("."):
        qualifier = re.search(r"([\w$]+)\s*\.$", before)
        q = qualifier.group(1) if qualifier else ""
        if re.search(r"(?:module\.exports|\bexports)\s*\.$", before):
            return "js module.exports", None
        if re.search(r"require\(\s*\)\s*\.$", before):
            return "js require", None
        return ("js namespace member", None) if q in spaces else ("other", None)
    b = _enclosing_brace(code, o)
    shorthand = before.endswith(("{", ",")) and after.startswith(("}", ","))
    keyed = after.startswith(":") and not after.startswith("::")
    if b < 0:
        return ("other", None) if keyed else (None, None)
    line = code.rfind("\n", 0, b) + 1
    head = code[line:b].strip()
    end = _matching_brace(code, b)
    tail_line = files.texts[rel][end + 1:files.texts[rel].find("\n", end) if files.texts[rel].find("\n", end) >= 0
                                 else len(code)]
    spec = re.search(r"from\s+['\"]([^'\"]+)['\"]", tail_line)
    if re.search(r"\bexport(?:\s+type)?$", head):
        return ("js re-export" if spec else "js export list"), None
    if re.search(r"\bimport(?:\s+type)?$|\bimport\s+[\w$]+\s*,$", head):
        via = spec is not None and _resolves_to(rel, spec.group(1), home)
        return ("js import" if via else "js import via re-export"), None
    if re.search(r"module\.exports\s*=$", head):
        return "js module.exports", None
    if re.search(r"(?:const|let|var)$", head) and re.match(r"\s*=\s*require\(", tail_line):
        return "js require", None
    if shorthand:
        return None, f"{name}: {{new}}"  # a plain object's shorthand property keeps its key
    if keyed:
        return "other", None
    return None, None


FINDERS = {"python": python_targets, "rust": rust_targets, "go": go_targets, "javascript": js_targets,
           "typescript": js_targets}

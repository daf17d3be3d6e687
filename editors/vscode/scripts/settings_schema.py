"""The VS Code `contributes.configuration` properties for the server's typed settings.

Generated from ``mercury_lsp.config.Settings`` (msgspec's JSON schema: types, enums, bounds,
defaults), one property per leaf (``mercury.nextEdit.maxDocuments``), so the extension's settings
mirror the server's exactly. ``--write`` updates package.json; without it the script exits 1 when
package.json differs (the test runs it that way).

    .venv/bin/python editors/vscode/scripts/settings_schema.py --write
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from pathlib import Path

import msgspec

from mercury_lsp.config import CLIENT_ONLY_KEYS, Settings

PACKAGE = Path(__file__).resolve().parents[1] / "package.json"
SECTION = "mercury"


FIELD = re.compile(r"^\s+(\w+): [^#]*?(?:#\s*(.+))?$")


def _comments(cls: type) -> dict[str, str]:
    """Field name -> its comment in mercury_lsp/config.py (trailing, else the lines above it)."""
    out: dict[str, str] = {}
    above: list[str] = []
    for line in inspect.getsource(cls).splitlines()[1:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            text = stripped.lstrip("# ")
            if len(text.split()) > 1:  # one word ("# Decoding."): a heading, not a description
                above.append(text)
            continue
        m = FIELD.match(line)
        if m:
            text = m.group(2) or " ".join(above)
            if text:
                out[m.group(1)] = text[0].upper() + text[1:]
        above = []
    return out


def _leaf(schema: dict, defs: dict) -> dict:
    """A VS Code property schema for one msgspec field schema."""
    if "$ref" in schema:
        return _leaf(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        options = [_leaf(s, defs) for s in schema["anyOf"]]
        out: dict = {"type": [o["type"] for o in options]}
        for o in options:
            out.update({k: v for k, v in o.items() if k != "type"})
        return out
    out = {k: schema[k] for k in ("type", "enum", "minimum", "maximum", "exclusiveMinimum", "items")
           if k in schema}
    if "enum" in schema and "type" not in out:
        out["type"] = "string"
    if "exclusiveMinimum" in out:  # VS Code's editor understands inclusive bounds only
        out["minimum"] = out.pop("exclusiveMinimum")
    return out


def properties() -> dict[str, dict]:
    (_, defs) = msgspec.json.schema_components([Settings])
    out: dict[str, dict] = {}

    def walk(struct_name: str, value: msgspec.Struct, prefix: str) -> None:
        schema = defs[struct_name]
        for name, field_schema in schema["properties"].items():
            key = f"{prefix}.{name}"
            ref = field_schema.get("$ref")
            if ref is not None:
                child = ref.rsplit("/", 1)[-1]
                attr = next(f.name for f in msgspec.structs.fields(type(value)) if f.encode_name == name)
                walk(child, getattr(value, attr), key)
                continue
            prop = _leaf(field_schema, defs)
            attr = next(f.name for f in msgspec.structs.fields(type(value)) if f.encode_name == name)
            prop["default"] = msgspec.to_builtins(getattr(value, attr))
            note = _comments(type(value)).get(attr, "")
            prop["markdownDescription"] = (f"{note}{'. ' if note and not note.endswith('.') else ' '}"
                                           f"(server setting `{key[len(SECTION) + 1:]}`)").strip()
            out[key] = prop

    walk("Settings", Settings(), SECTION)
    return out


def main(argv: list[str]) -> int:
    package = json.loads(PACKAGE.read_text())
    current = package["contributes"]["configuration"]["properties"]
    client = {k: v for k, v in current.items() if k.split(".", 1)[1].split(".")[0] in CLIENT_ONLY_KEYS}
    wanted = {**client, **properties()}
    if current == wanted:
        return 0
    if "--write" in argv:
        package["contributes"]["configuration"]["properties"] = wanted
        PACKAGE.write_text(json.dumps(package, indent=2) + "\n")
        return 0
    missing = sorted(set(wanted) - set(current))
    extra = sorted(set(current) - set(wanted))
    changed = sorted(k for k in set(wanted) & set(current) if wanted[k] != current[k])
    print(f"package.json settings differ from mercury_lsp.config: missing {missing}, extra {extra}, "
          f"changed {changed}; run {Path(__file__).name} --write", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

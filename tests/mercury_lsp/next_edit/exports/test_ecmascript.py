"""JavaScript's and TypeScript's export machinery followed by a rename at the definition: export
lists (``export { old }``, ``as x``), ``export ... from`` and ``export * from`` (an ``index.ts``),
named and namespace imports, the package's own name, CommonJS (``module.exports = { old }``,
``exports.old``, ``require`` destructured or dotted), shorthand properties, TypeScript classes
used as values; ``ns["old"]`` is a note; another module's binding is left."""

from __future__ import annotations

from tests.support.next_edit import follow

ROOT = "file:///js/jotai"
ATOM = f"{ROOT}/src/vanilla/atom.ts"
VANILLA = f"{ROOT}/src/vanilla.ts"
INDEX = f"{ROOT}/src/index.ts"
TEST = f"{ROOT}/tests/atom.test.ts"
SRC = "export function atom(read: number) {\n  return { read }\n}\n\nexport function other() {\n  return atom(1)\n}\n"


def renamed(src: str = SRC, old: str = "function atom", new: str = "function createAtom", uri: str = ATOM):
    return uri, src, src.replace(old, new, 1)


def test_an_export_list_and_its_importers_follow():
    src = "function atom(read: number) {\n  return read\n}\n\nexport { atom }\n"
    test = "import { atom } from '../src/vanilla/atom'\n\natom(1)\nconst box = { atom }\n"
    texts, _ = follow(renamed(src), (TEST, test))
    assert texts[ATOM] == src.replace("atom", "createAtom")
    assert texts[TEST] == ("import { createAtom } from '../src/vanilla/atom'\n\ncreateAtom(1)\n"
                           "const box = { atom: createAtom }\n")


def test_an_export_under_an_alias_keeps_its_importers():
    src = "function atom(read: number) {\n  return read\n}\n\nexport { atom as primitive }\n"
    test = "import { primitive } from '../src/vanilla/atom'\n\nprimitive(1)\n"
    texts, _ = follow(renamed(src), (TEST, test))
    assert texts[ATOM] == src.replace("function atom", "function createAtom").replace("{ atom as", "{ createAtom as")
    assert texts[TEST] == test


def test_reexports_and_an_index_star_export_reach_the_tests():
    vanilla = "export { atom } from './vanilla/atom.ts'\nexport { other as o } from './vanilla/atom'\n"
    index = "export * from './vanilla.ts'\n"
    test = ("import { atom, other } from '../src/index'\nimport * as J from '../src'\n"
            "import { atom as a } from 'jotai'\n\natom(1); J.atom(2); a(3)\n")
    texts, _ = follow(renamed(), (VANILLA, vanilla), (INDEX, index), (TEST, test))
    assert texts[VANILLA] == vanilla.replace("{ atom }", "{ createAtom }")
    assert texts[INDEX] == index
    assert texts[TEST] == test.replace("atom", "createAtom").replace("createAtom as a", "createAtom as a")


def test_the_packages_own_name_with_a_subpath():
    vanilla = "export { atom } from './vanilla/atom'\n"
    test = "import { atom } from 'jotai/vanilla'\nimport { atom as b } from 'other-lib'\n\natom(1)\n"
    texts, _ = follow(renamed(), (VANILLA, vanilla), (TEST, test))
    assert texts[TEST] == test.replace("{ atom }", "{ createAtom }").replace("atom(1)", "createAtom(1)")


def test_a_namespace_lookup_by_string_is_a_note():
    test = "import * as A from '../src/vanilla/atom'\n\nA.atom(1)\nA['atom'](2)\n"
    texts, notes = follow(renamed(), (TEST, test))
    assert texts[TEST] == test.replace("A.atom", "A.createAtom")
    assert [test[n.start:n.end] for n in notes] == ["atom"]


def test_another_modules_binding_of_that_name_is_left():
    other = f"{ROOT}/src/other.ts"
    test = "import { atom } from '../src/other'\n\natom(1)\n"
    texts, _ = follow(renamed(), (other, "export const atom = 1\n"), (TEST, test))
    assert texts[TEST] == test


def test_a_typescript_class_is_renamed_as_a_type_and_as_a_value():
    src = "export class Store {\n  static make(): Store {\n    return new Store()\n  }\n}\n"
    test = "import { Store } from '../src/vanilla/atom'\n\nconst s: Store = new Store()\n"
    texts, _ = follow(renamed(src, "class Store", "class Registry"), (TEST, test))
    assert texts[ATOM] == src.replace("Store", "Registry")
    assert texts[TEST] == test.replace("Store", "Registry")


WS = "file:///js/ws"
BUFFER = f"{WS}/lib/buffer-util.js"
CJS = ("function concat(list) {\n  return list\n}\n\nfunction mask(a) {\n  return a\n}\n\n"
       "module.exports = { concat, mask: mask, toBuffer: concat };\nmodule.exports.concat = concat;\n"
       "exports.mask = mask;\n")


def test_commonjs_exports_and_requires_follow():
    user = f"{WS}/lib/receiver.js"
    text = ("const { concat, toBuffer } = require('./buffer-util');\nconst { mask: unmask } = require('./buffer-util.js');\n"
            "const util = require('./buffer-util');\n\nconcat([1]); util.concat([2]); require('./buffer-util').concat([3]);\n"
            "unmask(1);\n")
    index = f"{WS}/index.js"
    text2 = "const { concat } = require('./lib/buffer-util');\n\nmodule.exports = { concat };\n"
    test = f"{WS}/test/buffer.test.js"
    text3 = "const { concat } = require('..');\n\nconcat([]);\n"
    texts, _ = follow((BUFFER, CJS, CJS.replace("function concat", "function join")),
                      (user, text), (index, text2), (test, text3))
    assert texts[BUFFER] == CJS.replace("concat", "join")
    assert texts[user] == text.replace("concat", "join")
    assert texts[index] == text2.replace("concat", "join")
    assert texts[test] == text3.replace("concat", "join")


def test_a_commonjs_key_that_is_not_the_name_keeps_its_importers():
    user = f"{WS}/lib/receiver.js"
    text = "const { toBuffer } = require('./buffer-util');\n\ntoBuffer(1);\n"
    texts, _ = follow((BUFFER, CJS, CJS.replace("function concat", "function join")), (user, text))
    assert "toBuffer: join" in texts[BUFFER]
    assert texts[user] == text


def test_a_signature_change_reaches_the_calls_of_an_alias():
    before = "export function atom(read: number) {\n  return read\n}\n\natom(1)\n"
    after = "export function atom(read: number, write: number) {\n  return read\n}\n\natom(1, 2)\n"
    test = "import { atom as a } from '../src/vanilla/atom'\n\na(3)\n"
    texts, _ = follow((ATOM, before, after), (TEST, test), rule="NE102")
    assert texts[TEST] == test.replace("a(3)", "a(3, 2)")

"""Go's export machinery followed by a rename at the package-level name: the package's other
files, other packages' ``pkg.Old`` under their import's name (aliases, qualified types, dot
imports), and what is not the package's name (field keys, the standard library's package of the
same name, an unexported name elsewhere, an external test package's bare name); reflect lookups
are notes."""

from __future__ import annotations

from tests.support.next_edit import follow

ROOT = "file:///go/testify"
HOME = f"{ROOT}/assert/assertions.go"
SRC = ("package assert\n\ntype TestingT interface {\n\tErrorf(format string, args ...interface{})\n}\n\n"
       "func ObjectsAreEqual(expected, actual interface{}) bool {\n\treturn expected == actual\n}\n")


def renamed(old: str = "ObjectsAreEqual", new: str = "ObjectsEqual", kind: str = "func "):
    return HOME, SRC, SRC.replace(f"{kind}{old}", f"{kind}{new}", 1)


def test_the_packages_other_files_use_it_bare_but_not_as_a_field_key():
    other = f"{ROOT}/assert/equal.go"
    text = ("package assert\n\nfunc Equal(t TestingT, a, b interface{}) bool {\n\treturn ObjectsAreEqual(a, b)\n}\n\n"
            "var table = Case{ObjectsAreEqual: true}\nvar keyed = map[string]bool{ObjectsAreEqual: true}\n")
    texts, _ = follow(renamed(), (other, text))
    assert texts[other] == text.replace("return ObjectsAreEqual", "return ObjectsEqual").replace(
        "bool{ObjectsAreEqual", "bool{ObjectsEqual")


def test_other_packages_qualify_it_by_the_import_name():
    req = f"{ROOT}/require/require.go"
    text = ('package require\n\nimport (\n\tassert "github.com/stretchr/testify/assert"\n)\n\n'
            "func ObjectsAreEqual(a, b interface{}) bool {\n\treturn assert.ObjectsAreEqual(a, b)\n}\n")
    mock = f"{ROOT}/mock/mock.go"
    text2 = 'package mock\n\nimport ta "github.com/stretchr/testify/assert"\n\nvar f = ta.ObjectsAreEqual\n'
    texts, _ = follow(renamed(), (req, text), (mock, text2))
    assert texts[req] == text.replace("assert.ObjectsAreEqual", "assert.ObjectsEqual")
    assert texts[mock] == text2.replace("ta.ObjectsAreEqual", "ta.ObjectsEqual")


def test_a_type_is_renamed_where_it_is_qualified_and_where_a_dot_import_brings_it():
    req = f"{ROOT}/require/requirements.go"
    text = ('package require\n\nimport "github.com/stretchr/testify/assert"\n\n'
            "func Fail(t assert.TestingT) { var _ assert.TestingT = t }\n")
    dot = f"{ROOT}/suite/suite.go"
    text2 = 'package suite\n\nimport . "github.com/stretchr/testify/assert"\n\nvar t TestingT\n'
    texts, _ = follow(renamed("TestingT", "T", "type "), (req, text), (dot, text2))
    assert texts[req] == text.replace("assert.TestingT", "assert.T")
    assert texts[dot] == text2.replace("t TestingT", "t T")


def test_what_is_another_packages_is_left():
    other = f"{ROOT}/http/handler.go"
    text = ('package http\n\nimport (\n\t"errors"\n\tassert "github.com/other/lib/checks"\n)\n\n'
            "func f() bool { return errors.ObjectsAreEqual(1, 2) || assert.ObjectsAreEqual(1, 2) }\n")
    external = f"{ROOT}/assert/assertions_test.go"
    text2 = ('package assert_test\n\nimport "github.com/stretchr/testify/assert"\n\n'
             "func T() { assert.ObjectsAreEqual(1, 2); ObjectsAreEqual(3, 4) }\n")
    texts, _ = follow(renamed(), (other, text), (external, text2))
    assert texts[other] == text
    assert texts[external] == text2.replace("assert.ObjectsAreEqual", "assert.ObjectsEqual")


def test_the_standard_librarys_package_of_the_folders_name_is_left():
    home = "file:///go/app/errors/errors.go"
    src = "package errors\n\nfunc New(text string) error { return nil }\n"
    user = "file:///go/app/main.go"
    text = 'package main\n\nimport "errors"\n\nvar e = errors.New("x")\n'
    texts, _ = follow((home, src, src.replace("func New", "func Make")), (user, text))
    assert texts[user] == text


def test_an_unexported_name_stays_in_its_package():
    src = "package assert\n\nfunc objectsAreEqual() bool { return true }\n"
    req = f"{ROOT}/require/require.go"
    text = 'package require\n\nimport "github.com/stretchr/testify/assert"\n\nvar f = assert.objectsAreEqual\n'
    texts, _ = follow((HOME, src, src.replace("func objectsAreEqual", "func same")), (req, text))
    assert texts[req] == text


def test_a_reflect_lookup_is_a_note():
    req = f"{ROOT}/require/require.go"
    text = ('package require\n\nimport "github.com/stretchr/testify/assert"\n\n'
            'func f(v reflect.Value) { v.MethodByName("ObjectsAreEqual"); v.FieldByName(`ObjectsAreEqual`) }\n')
    texts, notes = follow(renamed(), (req, text))
    assert texts[req] == text
    assert [text[n.start:n.end] for n in notes] == ["ObjectsAreEqual", "ObjectsAreEqual"]

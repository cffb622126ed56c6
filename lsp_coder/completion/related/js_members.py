"""JavaScript and TypeScript: the names an imported binding offers after its dot.

``import * as fmt from './format'`` then ``fmt.`` may go on only with a name ``format`` exports;
``import {AuthorityType} from './authority'`` then ``AuthorityType.`` only with a member of the
enum or the object literal (``{...} as const``, ``Object.freeze({...})``) that file declares
under that name. Nothing is offered where the names cannot all be known from the text: a file
that re-exports another whole (``export * from``), assigns ``module.exports`` or ``exports``,
an object with a spread or a computed key, a class (inherited and static members), a name
re-exported from elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachetools import LRUCache

from . import tags
from .js_definitions import resolve
from .js_imports import DEFAULT, NAMESPACE, Binding
from .text import FileReads

EXPORTS = "*"
"""The key of a file's exported names in ``FileMembers.names``."""

OPEN_WORLD = (b"module.exports", b"exports.", b"export =")
"""Text that can export names no statement here shows."""

BINDINGS_LOOKED_UP = 32
"""At most this many imported names are followed for one document."""

FILES_CACHED = 64
"""Files whose members are remembered (read again when their size or time changes)."""

LOOKUPS_KEPT = 64
"""Documents' lookups kept (by the document, its imports and the files' state)."""


@dataclass(frozen=True, slots=True)
class FileMembers:
    """What a file's declarations offer after a dot."""

    names: dict[str, frozenset[str]]
    """``EXPORTS`` -> the names the file exports (absent when not all are known); an
    exported name -> the members of its enum or object literal (where all are known)."""


class ScriptMembers:
    """The names each binding a JavaScript or TypeScript document imports from another file
    of the workspace offers after its dot (worker thread).

    Args:
        max_file_bytes: a larger file is not read (it offers no names).
        allows: whether a file may be read (``exclusion``).
    """

    def __init__(self, max_file_bytes: int,
                 allows: Callable[[Path], bool] = lambda _path: True) -> None:
        self.max_file_bytes = max_file_bytes
        self._files = FileReads(max_file_bytes, _read, FILES_CACHED, allows)
        self._found: LRUCache[tuple, dict[str, tuple[Path, str, frozenset[str]]]] = LRUCache(
            LOOKUPS_KEPT)

    def find(self, bindings: dict[str, Binding], document: Path, files_generation: int,
             open_texts: Mapping[Path, str] | None = None) -> dict[str, frozenset[str]]:
        """Local name -> the names it offers: a namespace import its file's exports, a named
        import the members of the enum or object literal its file declares; a file open in
        the editor (``open_texts``) also offers what its unsaved text declares (none when
        that text's names cannot all be known)."""
        key = (document, files_generation, frozenset(bindings.items()))
        found = self._found.get(key)
        if found is None:
            found = {}
            for local, binding in list(bindings.items())[:BINDINGS_LOOKED_UP]:
                file = resolve(binding.source, document)
                members = self._files.get(file) if file is not None else None
                if file is None or members is None or binding.exported == DEFAULT:
                    continue
                wanted = EXPORTS if binding.exported == NAMESPACE else binding.exported
                if wanted in members.names:
                    found[local] = (file, wanted, members.names[wanted])
            self._found[key] = found
        out: dict[str, frozenset[str]] = {}
        for local, (file, wanted, names) in found.items():
            text = (open_texts or {}).get(file)
            if text is not None:
                unsaved = self._files.unsaved(file, text)
                if unsaved is None or wanted not in unsaved.names:
                    continue
                names = names | unsaved.names[wanted]
            out[local] = names
        return out


def _read(file: Path, data: bytes) -> FileMembers | None:
    language = tags.language_of(file.suffix)
    return file_members(language, data) if language is not None else None


def file_members(language: str, source: bytes) -> FileMembers:
    """The exported names of ``source`` and the members of its exported enums and object
    literals (nothing when the grammar is missing)."""
    grammar = tags.grammar(language)
    if grammar is None:
        return FileMembers({})
    from tree_sitter import Parser

    root = Parser(grammar).parse(source).root_node
    declared: dict[str, frozenset[str]] = {}
    exported: dict[str, str] = {}  # the name exported -> the local name it stands for
    complete = not any(marker in source for marker in OPEN_WORLD)
    for node in root.named_children:
        statement = node
        if node.type == "export_statement":
            complete = _exports(node, exported) and complete
            statement = node.child_by_field_name("declaration") or node
        found = list(_declarations(statement))
        if statement is not node and not found:
            complete = False  # an exported declaration of a kind not read here
        for name, members in found:
            if members is not None:
                declared[name] = members
            if statement is not node:
                exported[name] = name
    names = {name: declared[local] for name, local in exported.items() if local in declared}
    if complete:
        names[EXPORTS] = frozenset(exported)
    return FileMembers(names)


def _exports(node: Any, exported: dict[str, str]) -> bool:
    """Record the names an ``export`` statement exports; False where it exports names its
    text does not show (``export * from``)."""
    source = node.child_by_field_name("source")
    for child in node.named_children:
        if child.type == "export_clause":
            for spec in child.named_children:
                name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
                if name is not None:
                    local = _text(name)
                    # A name re-exported from elsewhere: its members are not declared here.
                    exported[_text(alias or name)] = "" if source is not None else local
        elif child.type == "namespace_export":
            exported[_text(child.named_children[-1])] = ""
    if any(child.type == "*" for child in node.children) and not any(
            child.type == "namespace_export" for child in node.named_children):
        return False
    if any(child.type == "default" for child in node.children):
        exported["default"] = ""
    return True


def _declarations(node: Any) -> Iterator[tuple[str, frozenset[str] | None]]:
    """(name, its members or None) for each name ``node`` declares."""
    if node.type == "enum_declaration":
        body = node.child_by_field_name("body")
        members = [] if body is None else [
            _key(m.child_by_field_name("name") if m.type == "enum_assignment" else m)
            for m in body.named_children]
        yield _text(node.child_by_field_name("name")), _complete(members)
    elif node.type in ("lexical_declaration", "variable_declaration"):
        for declarator in node.named_children:
            name = declarator.child_by_field_name("name")
            if declarator.type == "variable_declarator" and name is not None and (
                    name.type == "identifier"):
                yield _text(name), _object_keys(declarator.child_by_field_name("value"))
    elif node.type in ("function_declaration", "generator_function_declaration",
                       "class_declaration", "abstract_class_declaration",
                       "interface_declaration", "type_alias_declaration",
                       "internal_module", "module"):
        name = node.child_by_field_name("name")
        if name is not None:
            yield _text(name), None


def _object_keys(value: Any) -> frozenset[str] | None:
    """The keys of an object literal (through ``as const``, ``satisfies`` and
    ``Object.freeze``), or None."""
    while value is not None and value.type in ("as_expression", "satisfies_expression",
                                               "parenthesized_expression"):
        value = value.named_children[0] if value.named_children else None
    if value is not None and value.type == "call_expression" and _text(
            value.child_by_field_name("function")) == "Object.freeze":
        arguments = value.child_by_field_name("arguments")
        value = arguments.named_children[0] if arguments and arguments.named_children else None
    if value is None or value.type != "object":
        return None
    keys: list[str | None] = []
    for member in value.named_children:
        if member.type in ("pair", "method_definition"):
            keys.append(_key(member.child_by_field_name(
                "key" if member.type == "pair" else "name")))
        elif member.type == "shorthand_property_identifier":
            keys.append(_text(member))
        elif member.type != "comment":
            keys.append(None)  # a spread: not all keys are known
    return _complete(keys)


def _key(node: Any) -> str | None:
    """A property name as code after a dot writes it; None for a computed or a quoted key
    that is no identifier."""
    if node is None:
        return None
    if node.type in ("property_identifier", "identifier", "private_property_identifier"):
        return _text(node)
    if node.type == "string":
        text = _text(node)[1:-1]
        return text if text.isidentifier() else ""  # reachable only by brackets
    if node.type == "number":
        return ""
    return None


def _complete(keys: list[str | None]) -> frozenset[str] | None:
    if any(k is None for k in keys):
        return None
    return frozenset(k for k in keys if k)


def _text(node: Any) -> str:
    return "" if node is None else node.text.decode("utf-8", "replace")

"""How a file uses names: each use's qualifier (`res.send`, `crate::raw::TOKEN`, `cobra.CheckErr`),
whether it only binds the name (an import, a re-export), the function holding it, and what the
file imports from where. Read with tree-sitter when a review asks (pure: text in, FileUses out),
for the few files a retrieval looks at; the index keeps only names and lines.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from functools import cache

from tree_sitter import Node, Query, QueryCursor
from tree_sitter_language_pack import get_language

from bot.index.bindings import Bindings, read_bindings, rust_paths
from bot.index.go_types import RESULTS, go_variables
from bot.index.languages import CONTAINER_KINDS, DEFINITIONS, IMPORT_NODES, QUALIFIER_TOKENS
from bot.index.parse import definition_entries, grammar, parse_tree, scoped, text_of
from bot.index.signatures import local_types, member_types, parameter_names, parameter_types
from bot.store.index.model import Definition

_CALLS = frozenset({"call_expression", "call", "method_invocation", "new_expression", "object_creation_expression",
                    "macro_invocation"})
_RE_EXPORTS = frozenset({"export_clause", "export_specifier"})
_DECLARING = frozenset({"javascript", "typescript", "tsx", "python"})  # whose locals' types types_at reads
_KEYS = {"keyword_argument": "name", "pair": "key", "field_initializer": "field", "named_argument": "name",
         "property_signature": "name"}
_NAMED = frozenset({t for kinds in DEFINITIONS.values() for t in kinds} | {"function_expression", "class"})


@dataclass(frozen=True, slots=True)
class Use:
    name: str
    line: int
    qualifier: str | None  # the text before `.`, `::` or `->`: "res", "this", "crate::raw"; None: bare
    binding: bool  # an import, a re-export, a keyword's or a key's name, a definition's own name
    local: bool  # bare, and bound by a function around it (a parameter, a local declared before it)
    qualifies: bool  # is itself the qualifier of a name (`Util` in `Util.checkArgument`)
    arguments: int | None  # how many arguments it is called with; None: not called
    path: bool = False  # qualified by `::` (Rust's `Self::new`, `crate::x`), not by `.` (`self.x`)
    typed: bool = False  # a TypeScript type's name (`x: Atom<V>`, `ns.Options`): it means a type, never a value
    declared: int = -1  # local: the line of the declaration that binds it (0: a parameter)


@dataclass
class FileUses:
    path: str
    language: str
    definitions: tuple[Definition, ...]
    uses: dict[str, list[Use]] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)  # local name → the module it comes from
    globs: list[str] = field(default_factory=list)  # modules imported whole (`use super::*`, `import a.*`)
    package: str = ""  # Go's `package doc`
    lines: list[str] = field(default_factory=list)
    memo: dict = field(default_factory=dict, repr=False, compare=False)  # what resolution read of it, kept
    bindings: Bindings = field(default_factory=lambda: Bindings({}, {}, []))  # imports and exports, by name

    def caller_of(self, line: int) -> Definition | None:
        """The innermost definition holding `line` that is not a container (a class, a module)."""
        best = None
        for d in self.definitions:
            if d.start <= line <= d.end and d.kind not in CONTAINER_KINDS and (best is None or d.start >= best.start):
                best = d
        return best

    def types_at(self, line: int) -> dict[str, str]:
        """What the code at `line` declares its variables to be: the enclosing function's parameters,
        its receiver or `self`/`this`, its class's fields, and in Go its locals and the package's
        variables (variable → type name)."""
        holder = self.caller_of(line)
        if holder is None:
            return {}
        owner = holder.scope.split(".")[-1] if holder.scope else ""
        types = {"self": owner, "this": owner, "Self": owner} if owner else {}
        for d in self.definitions:
            if d.kind == "field" and d.scope == holder.scope:
                found = re.search(rf"([\w.]+)(?:<[^>]*>)?\s+{re.escape(d.name)}\b", d.signature)
                if found:
                    types[d.name] = found.group(1).split(".")[-1]
        if self.language == "go":  # its locals and the package's variables (bot/index/go_types.py)
            types.update(go_variables(self.lines, self.definitions, holder, line, self.memo.get(RESULTS, {})))
        if self.language in _DECLARING:  # its class's attributes, then the function's own locals
            types.update(member_types(self.language, self._class_lines(owner)))
        types.update(parameter_types(self.language, holder.signature))
        if self.language in _DECLARING:
            types.update(local_types(self.language, self.lines[holder.start:line - 1]))
        return types

    def _class_lines(self, owner: str) -> list[str]:
        """The lines of the class `owner` (where its attributes are declared)."""
        found = next((d for d in self.definitions if d.name == owner and d.kind == "class"), None)
        return self.lines[found.start - 1:found.end] if found is not None else []


def read_uses(path: str, text: str, names: set[str] | None = None, lines: set[int] | None = None) -> FileUses | None:
    """The uses of `names` (every name when None) in `text`, on `lines` (every line when None),
    read as the language of `path`."""
    parsed = parse_tree(path, text)
    if parsed is None:
        return None
    language, tree = parsed
    entries = definition_entries(language, tree)
    out = FileUses(path, language, tuple(scoped(entries)), lines=text.split("\n"))
    own = {e.name_start for e in entries if e.emit}
    scopes: dict[int, dict[str, int]] = {}  # a function's start byte → the names it binds, and from which line
    for node in QueryCursor(grammar(language)[2]).captures(tree.root_node).get("name", []):
        if node.child_count:
            continue
        word = text_of(node)
        if names is not None and word not in names or len(word) < 2:
            continue
        if lines is not None and node.start_point[0] + 1 not in lines:
            continue
        out.uses.setdefault(word, []).append(_use(node, word, node.start_byte in own, language, out.lines, scopes))
    _imports(language, tree.root_node, out)
    out.bindings = read_bindings(language, tree.root_node, _walk_imports(language, tree.root_node))
    return out



def _use(node: Node, word: str, own: bool, language: str, text: list[str], scopes: dict[int, dict[str, int]]) -> Use:
    before = node.prev_sibling
    qualifier = None
    parent = node.parent
    if before is not None and before.type in QUALIFIER_TOKENS and before.prev_sibling is not None \
            and (parent is None or parent.type not in _NAMED):  # `fn f() -> Error`: a return type, no qualifier
        qualifier = _macro_path(before) if parent is not None and parent.type == "token_tree" \
            else text_of(before.prev_sibling)
    after = node.next_sibling
    qualifies = after is not None and after.type in QUALIFIER_TOKENS
    line = node.start_point[0] + 1
    declared = _local(node, word, language, text, scopes) if qualifier is None else None
    path = qualifier is not None and before is not None and before.type == "::"
    typed = node.type == "type_identifier" and language in ("typescript", "tsx")
    return Use(word, line, qualifier, own or _binds(node), declared is not None, qualifies, _arguments(node), path,
               typed, -1 if declared is None else declared)


def _macro_path(separator: Node) -> str:
    """The path before a name inside a Rust macro's tokens (`debug_assert!(crate::ser::f(x))`),
    which tree-sitter leaves flat: every `segment ::` and `segment .` before it, back to the start."""
    parts: list[str] = []
    current: Node | None = separator
    while current is not None and current.type in QUALIFIER_TOKENS and current.prev_sibling is not None \
            and current.prev_sibling.type in ("identifier", "crate", "self", "super", "metavariable"):
        parts.insert(0, text_of(current.prev_sibling))
        current = current.prev_sibling.prev_sibling
        if current is not None and current.type == "::":
            continue
        break
    if not parts:  # `f(x).is_ok()`: what is before is no path
        return text_of(separator.prev_sibling)
    return "::".join(parts) if separator.type == "::" else ".".join(parts)


_FUNCTIONS = frozenset({
    "function_definition", "function_declaration", "method_declaration", "method_definition", "func_literal",
    "function_item", "closure_expression", "arrow_function", "function_expression", "generator_function_declaration",
    "generator_function", "lambda", "constructor_declaration", "lambda_expression", "anonymous_function",
})


_DESTRUCTURED = re.compile(r"\b(?:let|const|var)\s*[{\[]([^=]*)[}\]]\s*(?::[^=]*)?=")  # `const {a, b: c} = …`
_DECLARED = re.compile(r"^\s*(?:(?:let|const|var|mut)\s+)*([A-Za-z_$][\w$]*)\s*(?::[^=]*)?(?::=|=(?!=))"
                       r"|\b(?:let|const|var)\s+(?:mut\s+)?([A-Za-z_$][\w$]*)"
                       r"|\bfor\s*\(?\s*(?:(?:let|const|var)\s+)?([A-Za-z_$][\w$]*)\s+(?:in|of)\b"
                       r"|^\s*([A-Za-z_$][\w$]*)\s*,[^=]*:=")


def _local(node: Node, word: str, language: str, text: list[str], scopes: dict[int, dict[str, int]]) -> int | None:
    """The line where the innermost function around a bare use that binds its name binds it: a
    parameter (`def getchar(echo)`, `function (req, res)`: 0), or a local declared before the use
    (`var res = this.res`, `x := …`: its line); None: no function around it binds it."""
    line = node.start_point[0] + 1
    current = node.parent
    while current is not None:
        if current.type in _FUNCTIONS:
            if current.start_byte not in scopes:
                scopes[current.start_byte] = _bound(current, language, text)
            declared = scopes[current.start_byte].get(word, line + 1)
            if declared <= line:
                return declared
        current = current.parent
    return None


def _bound(function: Node, language: str, text: list[str]) -> dict[str, int]:
    """The names a function binds (its parameters from its first line, its locals from the line
    that declares them)."""
    out: dict[str, int] = {}
    body = function.child_by_field_name("body")
    first, last = (body or function).start_point[0] + 1, function.end_point[0] + 1
    for number in range(first, last + 1):
        line = text[number - 1] if number <= len(text) else ""
        for match in _DECLARED.finditer(line):
            name = next(g for g in match.groups() if g)
            out.setdefault(name, number)
        for match in _DESTRUCTURED.finditer(line):
            for name in re.findall(r"(?:[\w$]+\s*:\s*)?([A-Za-z_$][\w$]*)", match.group(1)):
                out.setdefault(name, number)
    parameters = function.child_by_field_name("parameters") or function.child_by_field_name("parameter")
    if parameters is not None:
        signature = text_of(parameters)
        for name in parameter_names(language, signature if signature.startswith("(") else f"({signature})"):
            out[name] = 0
    return out


def _binds(node: Node) -> bool:
    """Inside an import or a re-export (`export {x}`, `exports.x = x`, `pub use`)."""
    parent = node.parent
    if parent is not None and parent.type in _KEYS and parent.child_by_field_name(_KEYS[parent.type]) == node:
        return True  # `f(echo=False)`, `{retry: 2}`, `Error { code: c }`: a keyword or a key, not the name's use
    if parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("right") == node \
            and text_of(parent.child_by_field_name("left")).startswith(("exports.", "module.exports")):
        return True
    if parent is not None and parent.type == "member_expression" and parent.child_by_field_name("property") == node \
            and text_of(parent.child_by_field_name("object")) in ("exports", "module.exports") \
            and parent.parent is not None and parent.parent.type == "assignment_expression" \
            and parent.parent.child_by_field_name("left") == parent:
        return True  # `module.exports.x = …`: the name it exports under, not a use
    if parent is not None and parent.child_by_field_name("name") == node and parent.type in _NAMED:
        return True  # `function send(...)` of `res.send = function send`: a name, not a use
    if parent is not None and parent.type == "function_declarator":
        return True  # a C prototype: `int compute_total(const int *items, int n);`
    if parent is not None and parent.type in ("required_parameter", "optional_parameter") \
            and parent.child_by_field_name("pattern") == node:
        return True  # a TypeScript parameter's name, of a function or of a function type (`(atom: A) => void`)
    current: Node | None = parent
    for _ in range(8):
        if current is None:
            return False
        if current.type in IMPORT_NODES or current.type in _RE_EXPORTS or current.type == "package_declaration" or current.type == "variable_declarator" \
                and "require(" in text_of(current.child_by_field_name("value")):
            return True
        current = current.parent
    return False


def _arguments(node: Node) -> int | None:
    """How many arguments a call of the name passes (`f(a, b)`, `x.f(a)`, `new F()`); None: no call."""
    parent = node.parent
    if parent is None:
        return None
    if parent.type in _CALLS and parent.child_by_field_name("name") == node:  # Java: `x.emit(...)`, `emit(...)`
        call: Node | None = parent
    else:
        callee = parent if node.prev_sibling is not None and node.prev_sibling.type in QUALIFIER_TOKENS else node
        call = callee.parent
        if call is None or call.type not in _CALLS or call.child_by_field_name("function") not in (callee, None) \
                and call.child_by_field_name("constructor") != callee:
            return None
    arguments = call.child_by_field_name("arguments") if call is not None else None
    if arguments is None:
        return None
    return sum(1 for c in arguments.named_children if "comment" not in c.type)


def _imports(language: str, root: Node, out: FileUses) -> None:
    """What each imported name stands for, by language: `from .utils import echo` (echo →
    .utils), `var x = require('./u').x`, `import {a} from './m'`, Go's import paths, Java's
    imports, Rust's `use` trees."""
    for node in _walk_imports(language, root):
        raw = text_of(node)
        if language == "python":
            _python_import(node, out)
        elif language in ("javascript", "typescript", "tsx"):
            _js_import(node, raw, out)
        elif language == "go" and node.type == "package_clause":
            out.package = raw.split()[-1]
        elif language == "go" and node.type == "import_spec":
            source = text_of(node.child_by_field_name("path")).strip('"`')
            alias = text_of(node.child_by_field_name("name"))
            out.imports[alias or source.rsplit("/", 1)[-1]] = source
        elif language == "java" and node.type == "package_declaration":
            out.package = re.sub(r"^package\s+|;$", "", raw.strip()).strip()
        elif language == "java" and node.type == "import_declaration":
            _java_import(raw, out)
        elif language == "rust" and node.type == "use_declaration":
            for path in rust_paths(re.sub(r"^(pub(\([^)]*\))?\s+)?use\s+|;$", "", raw.strip()).strip()):
                head, _, last = path.rpartition("::")
                if last == "*":
                    out.globs.append(head)
                    continue
                if last == "self":  # `use crate::de::{self, Deserializer}` binds de
                    head, _, last = head.rpartition("::")
                local = last.split(" as ")[-1].strip()
                out.imports[local] = head


def _java_import(raw: str, out: FileUses) -> None:
    """`import a.b.C;` binds C to a.b.C, `import static a.b.C.m;` m to a.b.C.m (the whole name, as
    javac reads it); `import a.b.*;` and `import static a.b.C.*;` import a package or a type whole."""
    target = re.sub(r"\s+", "", re.sub(r"^import\s+(static\s+)?|;$", "", raw.strip()))
    if target.endswith(".*"):
        out.globs.append(target[:-2])
    else:
        out.imports[target.rsplit(".", 1)[-1]] = target


@cache
def _import_query(language: str) -> Query | None:
    lang = get_language(language)  # type: ignore[arg-type]
    kinds = [t for t in sorted(IMPORT_NODES | {"export_statement", "package_clause", "package_declaration",
                                                "variable_declarator"})
             if lang.id_for_node_kind(t, True)]
    return Query(lang, "\n".join(f"({t}) @import" for t in kinds)) if kinds else None


def _walk_imports(language: str, root: Node) -> list[Node]:
    """Import statements anywhere in the file (a Python function's own `from x import y` too)."""
    query = _import_query(language)
    if query is None:
        return []
    found = QueryCursor(query).captures(root).get("import", [])
    return sorted((n for n in found if n.type != "variable_declarator" or "require(" in text_of(n)),
                  key=lambda n: n.start_byte)


def _python_import(node: Node, out: FileUses) -> None:
    module = text_of(node.child_by_field_name("module_name"))
    for child in node.children_by_field_name("name"):
        name = text_of(child.child_by_field_name("name") if child.type == "aliased_import" else child)
        alias = text_of(child.child_by_field_name("alias")) if child.type == "aliased_import" else ""
        if node.type == "import_statement":
            out.imports[alias or name.split(".")[0]] = name if alias else name.split(".")[0]
        else:  # `from . import formatting` binds the module .formatting; `from .utils import echo`, .utils
            out.imports[alias or name] = module + name if module.strip(".") == "" else module
    if node.type == "import_from_statement" and any(c.type == "wildcard_import" for c in node.named_children):
        out.globs.append(module)


def _js_import(node: Node, raw: str, out: FileUses) -> None:
    if node.type == "variable_declarator":  # var x = require('./utils').x
        required = re.search(r"require\(\s*['\"]([^'\"]+)['\"]", raw)
        name = node.child_by_field_name("name")
        if required and name is not None and name.type == "identifier":
            out.imports[text_of(name)] = required.group(1)
        return
    source_node = node.child_by_field_name("source")
    if source_node is None:
        return
    source = text_of(source_node).strip("'\"`")
    if node.type == "export_statement":
        if re.match(r"export\s+\*", raw):
            out.globs.append(source)
        return
    for match in re.finditer(r"([\w$]+)(?:\s+as\s+([\w$]+))?", re.sub(r"from\s+['\"].*$", "", raw[6:], flags=re.S)):
        if match.group(1) not in ("type", "as", "typeof"):
            out.imports[match.group(2) or match.group(1)] = source


def module_stem(path: str) -> str:
    """The name a module is imported by: `src/click/utils.py` → utils, `value/mod.rs` → value,
    `lib/index.js` → lib."""
    stem, extension = posixpath.splitext(posixpath.basename(path))
    packages = {".py": ("__init__",), ".rs": ("mod", "lib", "main")}.get(extension, ("index",))
    return posixpath.basename(posixpath.dirname(path)) if stem in packages else stem

"""Which tree-sitter grammar reads a path, and which of its nodes are definitions and names.

The tables are data so that a language is added by a line, not by code. Node type names are the
grammars' own (tree-sitter-language-pack 0.13, which bundles the compiled grammars in its wheel;
1.x fetches them from the network at run time, which a server behind a firewall cannot do).
"""

from __future__ import annotations

import posixpath

# File extension → grammar name in tree-sitter-language-pack.
EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".java": "java", ".rs": "rust",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp",
    ".cs": "csharp", ".rb": "ruby", ".php": "php", ".kt": "kotlin", ".kts": "kotlin",
}

# Grammar → node type → kind of the definition that node makes.
DEFINITIONS: dict[str, dict[str, str]] = {
    "python": {"function_definition": "function", "class_definition": "class", "assignment": "variable"},
    "javascript": {
        "function_declaration": "function", "generator_function_declaration": "function",
        "class_declaration": "class", "method_definition": "method", "variable_declarator": "variable",
        "function_expression": "function",
    },
    "go": {
        "function_declaration": "function", "method_declaration": "method", "type_spec": "type",
        "const_spec": "constant", "var_spec": "variable", "method_elem": "method",  # an interface's method
    },
    "java": {
        "class_declaration": "class", "interface_declaration": "interface", "enum_declaration": "enum",
        "record_declaration": "class", "method_declaration": "method", "constructor_declaration": "constructor",
        "field_declaration": "field", "constant_declaration": "constant", "enum_constant": "constant",
        "annotation_type_declaration": "interface", "annotation_type_element_declaration": "method",
    },
    "rust": {
        "function_item": "function", "function_signature_item": "function", "struct_item": "struct",
        "enum_item": "enum", "trait_item": "trait", "type_item": "type", "mod_item": "module",
        "macro_definition": "macro", "const_item": "constant", "static_item": "constant",
    },
    "c": {
        "function_definition": "function", "struct_specifier": "struct", "enum_specifier": "enum",
        "type_definition": "type",
    },
    "csharp": {
        "class_declaration": "class", "interface_declaration": "interface", "struct_declaration": "struct",
        "enum_declaration": "enum", "record_declaration": "class", "method_declaration": "method",
        "constructor_declaration": "constructor", "property_declaration": "property",
    },
    "ruby": {"method": "method", "singleton_method": "method", "class": "class", "module": "module"},
    "php": {
        "function_definition": "function", "method_declaration": "method", "class_declaration": "class",
        "interface_declaration": "interface", "trait_declaration": "trait", "enum_declaration": "enum",
    },
    "kotlin": {
        "function_declaration": "function", "class_declaration": "class", "object_declaration": "object",
    },
}
DEFINITIONS["typescript"] = {
    **DEFINITIONS["javascript"], "abstract_class_declaration": "class", "interface_declaration": "interface",
    "type_alias_declaration": "type", "enum_declaration": "enum", "function_signature": "function",
    "method_signature": "method", "abstract_method_signature": "method", "public_field_definition": "method",
    "enum_assignment": "enumerator",  # `A = 'a'` in an enum: what `Kind.A` opens (a bare `B,` is no node of its own)
}
DEFINITIONS["tsx"] = DEFINITIONS["typescript"]
DEFINITIONS["cpp"] = {
    **DEFINITIONS["c"], "class_specifier": "class", "namespace_definition": "namespace",
}

# Leaf node types that are names (of a definition, or a use of one).
NAME_TYPES = frozenset({
    "identifier", "type_identifier", "field_identifier", "property_identifier", "simple_identifier",
    "constant", "name", "shorthand_property_identifier", "namespace_identifier", "private_property_identifier",
})

# A JavaScript `variable_declarator` inside a function is a definition worth indexing only when it
# binds a function; at the top of a module, any value but an import (`require(...)`) or an alias
# (`var join = path.join`) is one: `export const NOTHING = Symbol(...)` is used like a function.
FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "class", "generator_function"})

# The name of a JavaScript module's default export when nothing else names it (`module.exports =
# (a, b) => …`, `export default function () {}`): the files that import it name it as they like.
DEFAULT_EXPORT = "default"

# Definitions that are values (a constant, a module-level variable, a field): changed, their uses
# matter as much as a function's calls.
VALUE_KINDS = frozenset({"constant", "variable", "field"})
# Definitions that hold other definitions: a changed line inside one is a change of what it holds.
CONTAINER_KINDS = frozenset({"class", "struct", "interface", "enum", "trait", "module", "namespace", "object"})

# Nodes that give the definitions inside them a scope without being definitions themselves: a
# Rust `impl Number { fn as_f64 }` makes `Number.as_f64` (field: the type named).
SCOPE_NODES: dict[str, dict[str, str]] = {"rust": {"impl_item": "type"}}

# Statements that import or re-export names: a name there binds, it is not a use.
IMPORT_NODES = frozenset({
    "import_statement", "import_from_statement", "future_import_statement", "import_declaration",
    "use_declaration", "import_spec", "namespace_use_declaration", "using_directive", "import_header",
})

# Tokens between a qualifier and the name it qualifies (`res.send`, `crate::raw::TOKEN`, `p->x`,
# `a?.b`): in every grammar the qualifier is the node just before the token.
QUALIFIER_TOKENS = frozenset({".", "::", "->", "?."})

# Where the body of a definition begins: its signature is the text before it.
BODY_FIELDS = ("body", "value")


def language_for(path: str) -> str | None:
    """The grammar for `path`, by its extension; None for a file we search but do not parse."""
    return EXTENSIONS.get(posixpath.splitext(path)[1].lower())


# Extensions of files that are never text: skipped before they are read (each read is a GitHub
# request); a binary file with another name is found by its content.
BINARY_EXTENSIONS = frozenset({
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tiff", ".psd", ".pdf", ".zip", ".gz", ".tgz",
    ".bz2", ".xz", ".7z", ".rar", ".jar", ".war", ".class", ".so", ".dll", ".dylib", ".exe", ".o", ".a", ".lib",
    ".pyc", ".whl", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4", ".mov", ".avi", ".wav", ".ogg",
    ".webm", ".sqlite", ".sqlite3", ".db", ".bin", ".dat",
})


# Grammars whose files can name each other's definitions (a `.d.ts` describes a `.js`, a `.h` is
# included by a `.cpp`); any other pair cannot, however alike their names.
_FAMILIES = {"typescript": "script", "tsx": "script", "javascript": "script", "cpp": "c"}


def family(language: str | None) -> str | None:
    """The family of a grammar: a use in one file can mean a definition in another only within one."""
    return _FAMILIES.get(language, language) if language is not None else None


def is_binary_name(path: str) -> bool:
    return posixpath.splitext(path)[1].lower() in BINARY_EXTENSIONS

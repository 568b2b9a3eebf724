"""What a definition's signature says of the calls that fit it (pure): a use with a number of
arguments its parameters cannot take is not a call of it, which tells apart overloads and
same-named functions of other arities; and what its parameters are called and declared to be
(`cmd *cobra.Command` → cmd: Command), which tells what a variable in its body is."""

from __future__ import annotations

import re


def arity_fits(signature: str, count: int | None) -> bool:
    """Whether a call with `count` arguments fits the parameters a signature declares (varargs,
    defaults and `self` allowed for); unknown counts fit."""
    if count is None or "(" not in signature:
        return True
    inner = signature[signature.find("(") + 1:]
    depth, params, current, has = 0, 0, "", False
    for char in inner:
        if char == ")" and depth == 0:
            break
        if char == "," and depth == 0:
            params += 1
            current = ""
            continue
        depth += 1 if char in "<([{" else -1 if char in ">)]}" else 0
        current += char
        has = has or not char.isspace()
    params += 1 if has else 0
    if re.search(r"\.\.\.|\*|\bvarargs\b", inner.split(")")[0]):
        return True
    required = params - inner.split(")")[0].count("=") - (1 if re.match(r"\s*&?(mut\s+)?self\b", inner) else 0)
    return required <= count <= params


_PARAMETERS = {
    "python": re.compile(r"(\w+)\s*:\s*['\"]?([\w.]+)"),
    "typescript": re.compile(r"(\w+)\??\s*:\s*([\w.]+)"),
    "go": re.compile(r"(\w+)\s+\*?(?:\[\])?\*?([\w.]+)\s*[,)]"),
    "rust": re.compile(r"(\w+)\s*:\s*&?(?:'\w+\s+)?(?:mut\s+)?(?:(?:impl|dyn)\s+)?((?:\w+::)*\w+)"),
}
_JAVA_PARAMETER = re.compile(r"([\w.]+)(?:<[^()]*?>)?(?:\[\])*\s+(\w+)\s*[,)]")


def parameter_types(language: str, signature: str) -> dict[str, str]:
    """Parameters' declared types in a signature (`cmd *cobra.Command` → cmd: Command); not those
    of a parameter's own function type (`step func(w io.Writer) bool`: w is not the function's)."""
    inner = _outer_lists(signature[signature.find("("):] if "(" in signature else "")
    inner = _optional(inner) if language == "python" else inner
    if language == "java":
        return {name: kind.split(".")[-1] for kind, name in _JAVA_PARAMETER.findall(inner)}
    pattern = _PARAMETERS.get("typescript" if language in ("tsx", "javascript") else language)
    if pattern is None:
        return {}
    return {name: re.split(r"\.|::", kind)[-1] for name, kind in pattern.findall(inner)}


def _outer_lists(text: str) -> str:
    """`text` without what parentheses inside parentheses hold: the signature's own parameter
    lists (and a Go receiver's), not a function type's."""
    out, depth = [], 0
    for char in text:
        depth += char == "("
        if depth <= 1:
            out.append(char)
        depth -= char == ")" and depth > 0
    return "".join(out)


def parameter_names(language: str, signature: str) -> set[str]:
    """The names a signature's parameters bind (`def f(self, echo: bool)` → self, echo)."""
    chunks: list[str] = []
    for inner in re.findall(r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)", signature):  # each parameter list
        depth, current = 0, ""
        for char in inner:
            if char == "," and depth == 0:
                chunks.append(current)
                current = ""
                continue
            depth += 1 if char in "<([{" else -1 if char in ">)]}" else 0
            current += char
        chunks.append(current)
    names = set()
    for chunk in chunks:
        words = re.findall(r"[A-Za-z_$][\w$]*", re.split(r"=|:(?!:)", chunk)[0] if language != "go" else chunk)
        words = [w for w in words if w not in ("mut", "const", "final", "readonly", "public", "private", "ref")]
        if not words:
            continue
        names.add(words[-1] if language in ("java", "csharp", "c", "cpp") else words[0])
    return names


_SCRIPT_LOCAL = re.compile(r"\b(?:const|let|var)\s+([\w$]+)\s*(?::\s*([\w$.]+))?\s*=\s*(?:new\s+([\w$.]+))?")
_PYTHON_LOCAL = re.compile(r"^\s*(\w+)\s*(?::\s*['\"]?([\w.]+)[^=]*)?=(?!=)\s*(?:((?:\w+\.)*[A-Z]\w*)\()?")
_SCRIPT_MEMBER = re.compile(r"^\s*(?:(?:private|public|protected|readonly|static|declare|override)\s+)*"
                            r"([\w$]+)[?!]?\s*:\s*([\w$.]+)")
_SCRIPT_FIELD_NEW = re.compile(r"^\s*(?:(?:private|public|protected|readonly|static|override)\s+)*"
                               r"([\w$]+)\s*=\s*new\s+([\w$.]+)")
_THIS_NEW = re.compile(r"\bthis\.([\w$]+)\s*=\s*new\s+([\w$.]+)")
_PYTHON_ATTRIBUTE = re.compile(r"^\s*(\w+)\s*:\s*['\"]?([\w.]+)")
_SELF_SET = re.compile(r"\bself\.(\w+)\s*(?::\s*['\"]?([\w.]+)[^=]*)?=(?!=)\s*"
                       r"(?:((?:\w+\.)*[A-Z]\w*)\(|(\w+)\s*$)?")
_OPTIONAL = re.compile(r"\bOptional\[\s*['\"]?([\w.]+)['\"]?\s*\]")
_PARAMETER_PROPERTY = re.compile(r"\b(?:private|public|protected|readonly)\s+([\w$]+)\??\s*:\s*([\w$.]+)")


def local_types(language: str, lines: list[str]) -> dict[str, str]:
    """What a function's own declarations say its variables are (`const h: Helper = …`, `const h =
    new Helper()`, Python's `h: Helper = …` and `h = Helper()`, a capitalised call being a class's)."""
    pattern = _PYTHON_LOCAL if language == "python" else _SCRIPT_LOCAL
    out: dict[str, str] = {}
    for line in lines:
        for match in (pattern.finditer(line) if language != "python" else [pattern.match(_optional(line))]):
            if match is None:
                continue
            declared = match.group(2) or match.group(3)
            if declared:
                out[match.group(1)] = declared.split(".")[-1]
            else:
                out.pop(match.group(1), None)  # declared again, of a type not said: no longer known
    return out


def member_types(language: str, lines: list[str]) -> dict[str, str]:
    """What a class's lines say its attributes are: a script's fields (`private worker: Helper`,
    `worker = new Helper()`, `this.worker = new Helper()`) and constructor parameter properties
    (`constructor(private readonly worker: Helper)`); Python's class annotations (`worker: Helper`)
    and `self.worker` set to a class's instance, annotated, or a parameter annotated in its `def`."""
    return _python_members(lines) if language == "python" else _script_members(lines)


def _script_members(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    depth = 0
    for line in lines:
        if depth == 1:
            found = _SCRIPT_MEMBER.match(line) or _SCRIPT_FIELD_NEW.match(line)
            if found and "(" not in line.split(":", 1)[0].split("=", 1)[0]:
                out[found.group(1)] = found.group(2).split(".")[-1]
        for found in (*_PARAMETER_PROPERTY.finditer(line), *_THIS_NEW.finditer(line)):
            out[found.group(1)] = found.group(2).split(".")[-1]
        depth += line.count("{") - line.count("}")
    return out


def _python_members(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    body = next((len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()), 0)
    parameters: dict[str, str] = {}
    for line in map(_optional, lines[1:]):
        indent = len(line) - len(line.lstrip())
        if line.lstrip().startswith("def "):
            parameters = parameter_types("python", line)
        found = _PYTHON_ATTRIBUTE.match(line) if indent == body else None
        if found:
            out[found.group(1)] = found.group(2).split(".")[-1]
        for found in _SELF_SET.finditer(line):
            declared = found.group(2) or found.group(3) or parameters.get(found.group(4) or "")
            if declared:
                out[found.group(1)] = declared.split(".")[-1]
    return out


def _optional(text: str) -> str:
    """Python's `Optional[Helper]` is a Helper where it is used (or None); another subscripted
    annotation (`List[Helper]`) stays the container's."""
    return _OPTIONAL.sub(r"\1", text)

"""One case's truth: the definitions its added lines use and the functions that call what it
changed, narrowed by the case's review, with every acceptable item and a note for each name left
out (bench/context_truth.py says the rules)."""

from __future__ import annotations

import posixpath
import re
import subprocess
import tempfile
from pathlib import Path

from context_data import change_of, git, is_secondary

from truth.go import GO_PREDECLARED
from truth.java import java_package, static_import
from truth.javascript import Modules, js_functions, module_private
from truth.model import (
    CHANGEABLE_KINDS,
    FUNCTION_KINDS,
    LANGUAGES,
    TYPE_KINDS,
    WORD,
    Tag,
    enclosing,
    family,
    innermost,
    is_member,
    language,
)
from truth.python import python_loads, python_uses
from truth.tags import tags_of
from truth.text import REEXPORT, code_of, import_lines, strip_file

MAX_FILES = 8


def item(kind: str, tags: list[Tag], symbol: str) -> dict:
    return {"kind": kind, "symbol": symbol, "alts": [[t.path, t.line, t.end] for t in tags]}


def derive(repo: str, case: dict) -> dict:
    change = change_of(repo, case)
    review = case.get("review", {})
    with tempfile.TemporaryDirectory() as tmp:
        base_root, head_root = Path(tmp) / "base", Path(tmp) / "head"
        base_root.mkdir()
        head_root.mkdir()
        files = [p for p in _sources(repo, case["base"], base_root) if (base_root / p).is_file()]
        base_tags = tags_of(base_root, files)
        changed = set(change.head_texts) | {e["filename"] for e in change.entries}
        for path, text in change.head_texts.items():
            (head_root / path).parent.mkdir(parents=True, exist_ok=True)
            (head_root / path).write_text(text)
        head_tags = tags_of(head_root, [p for p in change.head_texts if language(p)])
        texts = {p: (base_root / p).read_text(errors="replace") for p in files if p not in changed
                 and language(p) in ("java", "javascript", "typescript")}
    texts.update({p: t for p, t in change.head_texts.items() if language(p)})
    packages = {p: java_package(t) for p, t in texts.items() if language(p) == "java"}
    modules = _modules(texts, base_tags, head_tags, changed)
    added, touched = _lines(change.entries)
    by_name: dict[str, list[Tag]] = {}
    for tag in base_tags:
        if tag.path not in changed:
            by_name.setdefault(tag.name, []).append(tag)
    for tag in head_tags:
        by_name.setdefault(tag.name, []).append(tag)
    notes: list[str] = []
    truth: list[dict] = []
    acceptable: list[list] = []
    truth += _definitions(change, added, by_name, review.get("definitions", {}), acceptable, notes, packages,
                          modules)
    truth += _callers(repo, case, change, touched, base_tags, head_tags, by_name, review.get("callers", {}),
                      acceptable, notes, modules)
    dropped = set(review.get("drop", []))
    kept = [t for t in truth if f"{t['kind']} {t['alts'][0][0]} {t['symbol']}" not in dropped]
    for t in truth:
        if t not in kept:
            notes.append(f"dropped by review: {t['kind']} {t['alts'][0][0]} {t['symbol']}")
    return {"truth": kept, "acceptable": sorted(map(list, {tuple(a) for a in acceptable})), "derivation": notes}


def _sources(repo: str, base: str, root: Path) -> list[str]:
    """The paths of the base's files of the bench's languages, their texts written under `root`.
    Only those are extracted (by their extensions): a fetched snapshot may leave out a large blob
    (reduxjs/redux lacks a tutorial's .gif), and archiving the whole tree would fail on it."""
    paths = [p for p in git(repo, "ls-tree", "-r", "--name-only", base).decode().splitlines() if language(p)]
    if paths:
        patterns = sorted({f"*{posixpath.splitext(p)[1]}" for p in paths})
        archive = git(repo, "archive", base, "--", *patterns)
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return paths


def _modules(texts: dict[str, str], base_tags: list[Tag], head_tags: list[Tag], changed: set[str]) -> Modules:
    """The case's JavaScript and TypeScript files, with their definitions (the head's for changed files)."""
    tags: dict[str, list[Tag]] = {}
    for tag in [*(t for t in base_tags if t.path not in changed), *head_tags]:
        tags.setdefault(tag.path, []).append(tag)
    return Modules({p: t for p, t in texts.items() if family(p) == "javascript"}, tags)


def _lines(entries: list[dict]) -> tuple[dict[str, dict[int, str]], dict[str, set[int]]]:
    """Added lines (new-file number → text) and touched lines of every file's patch."""
    added: dict[str, dict[int, str]] = {}
    touched: dict[str, set[int]] = {}
    for entry in entries:
        path = entry["filename"]
        new = 0
        for raw in entry["patch"].split("\n"):
            header = re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)", raw)
            if header:
                new = int(header.group(1))
                continue
            if raw.startswith("+"):
                added.setdefault(path, {})[new] = raw[1:]
                touched.setdefault(path, set()).add(new)
                new += 1
            elif raw.startswith("-"):
                touched.setdefault(path, set()).add(max(1, new))
            else:
                new += 1
    return added, touched


def _reachable(name: str, place: Tag, path: str, imports: str, dotted: bool, packages: dict[str, str]) -> bool:
    """Whether a bare use of `name` in `path` can mean the definition `place`: in Python,
    JavaScript and TypeScript the file must import or require the name; in Go it must be of the
    same package (directory); in Java of the same package (its `package` line: one package may
    lie in several modules' source roots, `a/src/main/java/p` and `b/src/main/java/p`), or
    imported; a use through a receiver or a path (`x.name`, `pkg.Name`, `a::name`) may mean any."""
    lang = language(path)
    if dotted or lang == "rust":
        return True
    if lang in ("python", "javascript", "typescript"):
        return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", imports) is not None
    same_dir = posixpath.dirname(place.path) == posixpath.dirname(path)
    if lang == "java":
        same_package = place.path in packages and packages[place.path] == packages.get(path)
        return same_dir or same_package or re.search(rf"\b{re.escape(name)}\s*;|\.\*\s*;", imports) is not None
    return same_dir


def _definitions(change, added, by_name, review, acceptable, notes, packages, modules) -> list[dict]:
    out: list[dict] = []
    seen: set[str] = set()
    for path, lines in added.items():
        lang = language(path)
        if lang is None:
            continue
        secondary = is_secondary(path)
        head = change.head_texts.get(path, "")
        code_lines = strip_file(head, lang)
        imports = "\n".join(code_of(head.split("\n")[n - 1], lang) for n in sorted(import_lines(head, lang)))
        imports += "\n" + "\n".join(code_of(line, lang) for line in head.split("\n") if "require(" in line)
        python_names = python_loads(head) if lang == "python" else None
        bound = modules.bound(path) if family(path) == "javascript" else {}
        for number, text in lines.items():
            code = code_lines[number - 1] if lang != "python" and number <= len(code_lines) else code_of(text, lang)
            if python_names is not None:  # Python: the names `ast` reads on the line (f-strings' too)
                code = " ".join(f"x.{n}" if dotted_use else n for n, dotted_use in python_names.get(number, []))
            dotted = {m.group(1) for m in re.finditer(r"(?:\.|::|->)\s*([A-Za-z_$][\w$]*)", code)}
            qualifiers = {m.group(1) for m in re.finditer(r"([A-Za-z_$][\w$]*)\s*(?:\.|::)\s*[A-Za-z_$]", code)}
            of_types = {m.group(1) for m in re.finditer(r"\b[A-Z]\w*\s*::\s*([A-Za-z_]\w*)", code)} \
                if lang == "rust" else set()  # `Value::Number`: a variant or an associated item
            for name in WORD.findall(code):
                if name in seen or (lang == "go" and name in GO_PREDECLARED):
                    continue
                seen.add(name)
                if name in bound and name not in dotted and name not in review:
                    out += _bound_definition(name, bound[name][0], path, secondary, name in qualifiers, modules,
                                             acceptable, notes)
                    continue
                places = [t for t in by_name.get(name, []) if family(t.path) == family(path) and t.path != path
                          and (name in dotted or not is_member(t) or lang == "java" and static_import(head, t))
                          and _reachable(name, t, path, imports, name in dotted, packages)]
                for t in places:
                    acceptable.append(["definition", t.path, t.line, t.end])
                for t in by_name.get(name, []):
                    if t.path == path:
                        acceptable.append(["definition", t.path, t.line, t.end])
                if not secondary:
                    places = [t for t in places if not is_secondary(t.path)]
                if name in qualifiers and name not in dotted:  # `ClassName.get(`: the member is what is opened
                    places = [t for t in places if t.kind not in TYPE_KINDS]
                if name in of_types:
                    places = [t for t in places if is_member(t)]
                files = sorted({t.path for t in places})
                if not files:
                    continue
                if secondary:
                    notes.append(f"definition {name}: used by a test or example only, left out")
                    continue
                if any(t.path == path for t in by_name.get(name, [])) and name not in review:
                    notes.append(f"definition {name}: defined in {path} itself, left out")
                    continue
                if name in review:
                    chosen = review[name]
                    if chosen is None:
                        notes.append(f"definition {name}: left out by review")
                        continue
                    chosen = [chosen] if isinstance(chosen, str) else chosen
                    if len(chosen) == 1 and "|" in chosen[0]:  # "path:l1|l2|l3": any one of these
                        where, _, numbers = chosen[0].partition(":")
                        picked = [t for t in places if t.path == where and str(t.line) in numbers.split("|")]
                        out.append(item("definition", picked, name))
                        continue
                    picked = [t for t in places if t.path in chosen or f"{t.path}:{t.line}" in chosen]
                    if not picked:
                        raise ValueError(f"review names {chosen} for {name}, which defines none of {files}")
                    if all(":" in c for c in chosen):  # each one named: each one is truth
                        out += [item("definition", [t], name) for t in picked]
                    else:
                        out.append(item("definition", picked, name))
                elif len(files) > MAX_FILES:
                    notes.append(f"definition {name}: defined in {len(files)} files, left out")
                elif len(files) > 1:
                    notes.append(f"definition {name}: defined in {files}, unreviewed, left out")
                else:
                    out.append(item("definition", places, name))
    return out


def _bound_definition(name, module, path, secondary, qualifier, modules, acceptable, notes) -> list[dict]:
    """A name the file binds to a module's default export (`const name = require('./file')`,
    `import name from './file'`) means that export, whatever it is called there; used only as a
    qualifier (`name.x`) it is the member that is opened, unless the export is a function."""
    exported = modules.default(module)
    for t in exported:
        acceptable.append(["definition", t.path, t.line, t.end])
    if not exported or module == path or qualifier and all(t.kind not in FUNCTION_KINDS for t in exported):
        return []
    if secondary or any(is_secondary(t.path) for t in exported):
        notes.append(f"definition {name}: used by a test or example only, left out")
        return []
    return [item("definition", exported, name)]


def _callers(repo, case, change, touched, base_tags, head_tags, by_name, review, acceptable, notes,
             modules) -> list[dict]:
    out: dict[tuple[str, int], dict] = {}
    changed_defs: list[Tag] = []
    for path, lines in touched.items():
        for number in sorted(lines):
            tag = innermost(head_tags, path, number)
            if tag is None or tag.kind not in CHANGEABLE_KINDS:
                continue
            # and its aliases, which end where it ends (`req.get = req.header = function …`)
            for alias in head_tags:
                if alias.path == path and alias.end == tag.end and 0 <= tag.line - alias.line <= 2 \
                        and alias.kind in CHANGEABLE_KINDS and alias not in changed_defs:
                    changed_defs.append(alias)
    for target in changed_defs:
        lang = language(target.path)
        others = [t for t in by_name.get(target.name, []) if t != target and family(t.path) == family(target.path)
                  and (is_secondary(target.path) or not is_secondary(t.path))
                  and not (t.scope_kind in ("function", "method", "member", "func") and t.path != target.path)
                  and not (t.path == target.path and t.scope == target.scope and language(t.path) == "typescript"
                           and t.kind in FUNCTION_KINDS and (t.end == t.line or t.line <= target.end
                                                             and target.line <= t.end))]  # its overload signatures
        if target.scope_kind == "export":
            others = []  # a module's default export: its callers are its importers' (_export_uses)
        rule = review.get(target.name)
        if others and rule is None:
            files = sorted({t.path for t in others})
            notes.append(f"callers of {target.name}: also defined in {files[:5]}, unreviewed, left out")
        if rule == "none":
            notes.append(f"callers of {target.name}: left out by review")
        keep = _keeper(rule)
        member = is_member(target)
        file_texts: dict[str, str] = {}
        regions: dict[str, tuple[list[Tag], set[int]]] = {}
        uses = _export_uses(target, modules, file_texts) if target.scope_kind == "export" \
            else _uses(repo, case, change, target, file_texts)
        word = rf"(?<![\w$]){re.escape(target.name)}(?![\w$])"
        private = lang in ("javascript", "typescript") and target.scope_kind != "export" and module_private(
            file_texts.get(target.path) or change.head_texts.get(target.path, ""), target)
        for path, number, text, code in uses:
            if target.scope_kind in ("function", "method", "member", "func") and (path != target.path or re.search(
                    rf"(\.|::)\s*{word}|{word}\s*:(?!:)", code)):
                continue  # a local function is used bare (not as `x.name` or a key `name:`), in its own file only
            if member and not re.search(r"(\.|::)\s*" + word, code) and not (lang == "java" and (
                    path == target.path or static_import(file_texts[path], target))):
                continue  # a method or field is used through a receiver (bare only inside its Java class)
            if path == target.path and target.line <= number <= target.end:
                continue
            tags = head_tags if path in change.head_texts else base_tags
            if path not in regions:
                body = file_texts[path]
                regions[path] = (js_functions(path, strip_file(body, lang)) if lang in ("javascript", "typescript")
                                 else [], import_lines(body, lang))
            if number in regions[path][1] or REEXPORT.match(text):
                acceptable.append(["caller", path, number, number])
                continue  # an import or a re-export: not a caller
            caller = enclosing(tags, path, number, regions[path][0])
            top = caller is None
            start, end = (number, number) if top else (caller.line, caller.end)
            acceptable.append(["caller", path, start, end])
            if path != target.path and private:
                continue  # a module's own top-level name, not exported: another file's word is another thing
            if is_secondary(path) and not is_secondary(target.path):
                continue
            if path in touched and any(start <= n <= end for n in touched[path]):
                continue  # the diff shows it
            if (others and rule is None) or rule == "none" or not keep(path, text):
                continue
            symbol = "<top level>" if top else caller.label
            out.setdefault((path, start), {"kind": "caller", "symbol": symbol, "of": target.name,
                                           "alts": [[path, start, end]]})
    return list(out.values())


def _keeper(rule):
    """The review's rule for the uses of a shared name: "all", "none", a regular expression a use's
    line must match, or a list of {"match": regex, "in": [paths]} (a use kept when one matches)."""
    if rule is None or rule in ("all", "none"):
        return lambda path, text: True
    rules = [{"match": rule}] if isinstance(rule, str) else rule
    compiled = [(re.compile(r["match"]), set(r.get("in", []))) for r in rules]
    return lambda path, text: any(p.search(text) and (not where or path in where) for p, where in compiled)


def _export_uses(target: Tag, modules: Modules, file_texts: dict[str, str]):
    """(path, line, text, code) of every use of a module's anonymous default export: the lines
    of each importing file that use the name it binds the module to, the binding left out."""
    for path, name, binding in modules.importers(target.path):
        text = modules.texts[path]
        file_texts[path] = text
        word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
        lines = text.split("\n")
        for number, line in enumerate(strip_file(text, language(path)), 1):
            if number != binding and word.search(line):
                yield path, number, lines[number - 1], line


def _uses(repo, case, change, target: Tag, file_texts: dict[str, str]):
    """(path, line, text, code) of every line that uses the name in code (not in a comment or a
    string; in Python, as a name or an attribute by `ast`), at the head for changed files."""
    lang = language(target.path)
    exts = [f"*{e}" for e, lng in LANGUAGES.items() if family(f"x{e}") == family(target.path)]
    done = subprocess.run(["git", "-C", repo, "grep", "-l", "-w", "-I", "-e", target.name, case["base"], "--", *exts],
                          capture_output=True, text=True, errors="replace")
    changed = set(change.head_texts) | {e["filename"] for e in change.entries}
    texts = {row.split(":", 1)[1]: None for row in done.stdout.splitlines()}
    texts = {p: None for p in texts if p not in changed}
    for path in texts:
        texts[path] = git(repo, "show", f"{case['base']}:{path}").decode("utf-8", errors="replace")
    for path, text in change.head_texts.items():
        if family(path) == family(target.path):
            texts[path] = text
    word = re.compile(rf"(?<![\w$]){re.escape(target.name)}(?![\w$])")
    file_texts.update(texts)
    for path, text in texts.items():
        lines = text.split("\n")
        code = strip_file(text, language(path))
        exact = python_uses(text, target.name) if lang == "python" else None
        for number, line in enumerate(code, 1):
            if word.search(line) and (exact is None or number in exact):
                yield path, number, lines[number - 1], line

"""Where the names of a change lead: the definitions its added lines use, and every function that
uses what it altered, each as a candidate piece of context with the reason that asked for it.

Names are resolved, not only matched (bot/index/resolve.py): which of several same-named
definitions a use means is read from the file's imports, the use's qualifier and the declared
types around it. Callers come one candidate per calling function (its uses merged), those in the
primary sources before tests and examples; their ranking is here, the budget in retrieve.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from bot.index.candidates import Candidate, ChangedFile, Settings
from bot.index.languages import CONTAINER_KINDS, VALUE_KINDS
from bot.index.modules import Modules
from bot.index.paths import distance, is_built, is_test
from bot.index.resolve import MAYBE, NO, YES, imported_paths, is_container, is_member, refers
from bot.index.resolve_es import SCRIPT as SCRIPT_LANGUAGES
from bot.index.resolve_es import TYPED, implementations, overload_signature
from bot.index.signatures import arity_fits
from bot.index.store import IndexStore
from bot.index.uses import FileUses, Use, read_uses
from bot.store.index.model import Definition, Located

CALLABLE = frozenset({"function", "method", "constructor", "macro", "variable"})


class Files:
    """File texts (the head's for changed files, the index's for the rest) and their uses, each
    read and parsed once."""

    def __init__(self, store: IndexStore, changes: Sequence[ChangedFile]) -> None:
        self._store = store
        self._texts: dict[str, str | None] = {c.path: c.head_text for c in changes}
        self._changed = frozenset(c.path for c in changes)
        self._lines: dict[str, list[str] | None] = {}
        self._uses: dict[tuple[str, frozenset[str] | None, frozenset[int] | None], FileUses | None] = {}
        self._paths: frozenset[str] | None = None
        # Modules read only definitions and bindings: no name's uses (frozenset()), which are most of a parse's work
        self.modules = Modules(lambda path: self.uses(path, frozenset()) if self.text(path) is not None else None,
                               self.text, self.paths, lambda keys: {r.path for r in store.references(keys, limit=5000)})

    def paths(self) -> frozenset[str]:
        """Every path of the repository at the head: the index's, and the change's."""
        if self._paths is None:  # read once per retrieval, paths only (a large repository has many)
            given = {p: t is not None for p, t in self._texts.items()}
            kept = set(self._store.paths())
            self._paths = frozenset((kept - {p for p, present in given.items() if not present})
                                    | {p for p, present in given.items() if present})
        return self._paths

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            self._texts[path] = self._store.text(path)
        return self._texts[path]

    def lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            text = self.text(path)
            self._lines[path] = text.splitlines() if text is not None else None
        return self._lines[path]

    def refers(self, use: Use, where: FileUses, target: Located, rivals: list[Located]) -> int:
        """bot.index.resolve.refers, through this retrieval's module system."""
        return refers(use, where, target, rivals, self.modules)

    def declared_only(self, target: Located) -> bool:
        """A TypeScript member of a type alias's object type (`setState(…): void` in `type
        StoreImmer<S> = S extends … ? { … } : never`): a signature with no body, of a shape no class
        names as its contract (an interface's members, which classes implement by name, keep their
        calls through any receiver); a use through a receiver of unknown type is any object's of
        that shape, so only a receiver declared of the type says it is a caller; so too for a Go
        interface's method (`Printf(…)` in `type StdLogger interface`), most of whose word's calls are types'."""
        d = target.definition
        if target.path.endswith(".go"):
            return d.kind == "method" and not d.signature.startswith("func")
        if not target.path.endswith((".ts", ".tsx", ".mts", ".cts")) or d.kind != "method" or not d.scope:
            return False
        there = self.uses(target.path, frozenset())
        owner = d.scope.split(".")[-1]
        return there is not None and any(o.name == owner and o.kind == "type" for o in there.definitions)

    def uses(self, path: str, names: frozenset[str] | None = None,
             lines: frozenset[int] | None = None) -> FileUses | None:
        """The uses of `names` on `lines` (all when None), from one parse where one serves: a changed
        file's added lines are its whole parse's, filtered (it is read whole for its targets anyway),
        and a module's definitions and bindings (names = frozenset()) those of any parse of it."""
        key = (path, names, lines)
        if key in self._uses:
            return self._uses[key]
        if names == frozenset() and lines is None:
            parsed = next((u for (p, _, on), u in self._uses.items() if p == path and on is None), None)
            if parsed is not None:
                return parsed
        if names is None and lines is not None and path in self._changed:
            whole = self.uses(path)
            self._uses[key] = replace(whole, uses={n: kept for n, us in whole.uses.items()
                                                   if (kept := [u for u in us if u.line in lines])}) \
                if whole is not None else None
            return self._uses[key]
        text = self.text(path)
        self._uses[key] = read_uses(path, text, set(names) if names is not None else None,
                                    set(lines) if lines is not None else None) if text else None
        return self._uses[key]


def _label(d: Definition) -> str:
    return f"{d.scope}.{d.name}" if d.scope else d.name


def find_definitions(files: Files, changes: Sequence[ChangedFile], store: IndexStore,
                 settings: Settings) -> list[Candidate]:
    """The definitions, in other files, of the names the added lines use, as the files say which."""
    changed = {c.path for c in changes}
    wanted: dict[tuple[str, str], tuple[list[Use], FileUses]] = {}
    for change in changes:
        added = frozenset(line for line, _ in change.added)
        where = files.uses(change.path, None, added) if change.head_text is not None else None
        if where is None:
            continue
        for name, uses in where.uses.items():
            on = [u for u in uses if not u.binding] or files.modules.imported(where, uses) \
                or imported_paths(where, uses)
            if on:  # calls first: the reason names the line that calls it, else the first that uses it
                wanted[(change.path, name)] = (sorted(on, key=lambda u: (u.arguments is None, u.line)), where)
    names = {name for _, name in wanted}
    found = [loc for loc in store.definitions(names, limit=5000) if loc.path not in changed]
    for path in changed:
        head = files.uses(path) if files.text(path) is not None else None
        found += [Located(path, d) for d in (head.definitions if head else ()) if d.name in names]
    by_name: dict[str, list[Located]] = {}
    for loc in found:
        by_name.setdefault(loc.definition.name, []).append(loc)
    out: list[tuple[tuple, Candidate]] = []
    for (path, name), (uses, where) in wanted.items():
        places = by_name.get(name, [])
        extra = [loc for use in uses for loc in files.modules.resolved(use, where)]
        places = places + [loc for loc in dict.fromkeys(extra) if loc not in places]
        chosen: dict[tuple[str, int], tuple[int, Located, Use]] = {}
        for use in uses:  # `c.Mark(…)` and `Mark(…)` on one line may mean two definitions
            for strength, loc in _chosen(files, use, where, places, settings):
                key = (loc.path, loc.definition.start)
                if key not in chosen or chosen[key][0] < strength:
                    chosen[key] = (strength, loc, use)
        for strength, loc, use in chosen.values():
            d = loc.definition
            group = 0 if d.kind in CALLABLE else 1 if d.kind in VALUE_KINDS else 2
            rank = (is_test(path), strength != YES, is_test(loc.path) and not is_test(path), group, is_member(loc),
                    distance(loc.path, path), path, use.line, d.start)
            out.append((rank, Candidate(loc.path, d.start, d.end, _label(d), "definition",
                                         f"{name} is used on {path}:{use.line}", asked_by_test=is_test(path))))
    return [c for _, c in sorted(out, key=lambda item: item[0])]


def _chosen(files: Files, use: Use, where: FileUses, places: list[Located],
            settings: Settings) -> list[tuple[int, Located]]:
    """Which of a name's definitions a use means: those the file says (the overloads whose arity
    fits first), else a few guesses when the name is rare enough; none in the file itself."""
    scored = [(files.refers(use, where, loc, [r for r in places if r is not loc]), loc) for loc in places]
    if any(strength == YES and loc.path == where.path for strength, loc in scored):
        return []  # the file's own
    scored = [(s, loc) for s, loc in scored if s != NO and loc.path != where.path
              and not (use.qualifies and is_container(loc))  # `Util.check(`: the member is what is opened
              and not (loc.definition.kind in ("module", "namespace") and not use.qualifies)]
    scored = [(s, loc) for s, loc in scored if not overload_signature(loc, [o for _, o in scored], files.lines)]
    yes = implementations([loc for s, loc in scored if s == YES], where.language)
    fitting = [loc for loc in yes if arity_fits(loc.definition.signature, use.arguments)]
    if yes:  # overloads: those a call's arguments fit, when some do
        return [(YES, loc) for loc in (fitting or yes)[:settings.max_overloads]]
    maybe = implementations([loc for s, loc in scored if s == MAYBE and not is_test(loc.path)  # primary only
                             and not is_built(loc.path)],
                            where.language)
    if not maybe or len({loc.path for loc in maybe}) > settings.ambiguous_name:
        return []
    maybe.sort(key=lambda loc: (not arity_fits(loc.definition.signature, use.arguments), is_member(loc),
                                distance(loc.path, where.path), loc.path, loc.definition.start))
    return [(MAYBE, loc) for loc in maybe[:settings.max_definitions_per_name]]


def _targets(files: Files, changes: Sequence[ChangedFile]) -> list[tuple[Located, int]]:
    """What the change altered: for each touched line, the innermost definition holding it that
    is not a container (a function, a method, a constant, a field; not a Go type, whose fields are
    no definitions here and whose users use its name, not what changed), and its aliases (`req.get =
    req.header = function …`), with the first touched line inside it; and in Java the field or the
    method that holds an anonymous class whose method it is (`VISITOR = new SimpleTypeVisitor8<>() {
    visitError … }`, `return new TypeAdapter<T>() { read … }`), whose users the change reaches."""
    out: dict[tuple[str, str, int], tuple[Located, int]] = {}
    for change in changes:
        where = files.uses(change.path) if change.head_text is not None else None
        if where is None:
            continue
        for line in change.touched:
            if line > len(where.lines) or not where.lines[line - 1].strip():
                continue  # a blank line changed: no code did
            holder = where.caller_of(line)
            if holder is None:
                continue
            if where.language == "go" and holder.kind == "type":
                continue  # a struct's field or an alias changed: its users' functions do not call what changed
            for d in where.definitions:
                if d.kind in ("type", "enumerator") and where.language in TYPED:
                    continue  # a TypeScript type alias or enum member: its users declare or compare, they call nothing
                if (d.start, d.end) == (holder.start, holder.end) and d.kind not in CONTAINER_KINDS \
                        or where.language == "java" and d.kind in _HOLDERS and d.start < holder.start \
                        and holder.end <= d.end:
                    out.setdefault((change.path, d.name, d.start), (Located(change.path, d), line))
    return list(out.values())


_HOLDERS = VALUE_KINDS | {"method", "constructor"}  # Java definitions that may hold an anonymous class


@dataclass
class _Caller:
    target: Located
    line: int  # the changed line that asked
    path: str
    holder: Definition | None
    lines: list[int]
    strength: int
    bounds: tuple[int, int] = (1, 1 << 30)  # outside any function: the lines between its neighbours


def find_callers(files: Files, changes: Sequence[ChangedFile], store: IndexStore,
             settings: Settings) -> list[Candidate]:
    """Every function that uses what the change altered, one piece each (its uses merged): in the
    changed files themselves (at the head) and in the rest of the repository."""
    targets = _targets(files, changes)
    if not targets:
        return []
    changed = {c.path for c in changes}
    touched = {c.path: set(c.touched) for c in changes}
    names = frozenset(t.definition.name for t, _ in targets)
    rivals: dict[str, list[Located]] = {}
    heads: list[Located] = []
    for change in changes:
        head = files.uses(change.path) if change.head_text is not None else None
        heads += [Located(change.path, d) for d in (head.definitions if head is not None else ()) if d.name in names]
    for loc in [*store.definitions(names, limit=5000), *heads]:
        if loc.path not in changed or loc in heads:  # the changed files' as they are at the head
            rivals.setdefault(loc.definition.name, []).append(loc)
    paths, renamed = _caller_paths(files, store, [t for t, _ in targets], changed, settings)
    found: dict[tuple, _Caller] = {}
    for path in paths:
        where = files.uses(path, names)
        if where is None:
            continue
        aliases = files.modules.aliases(where, [t for t, _ in targets], renamed)
        if aliases:
            where = files.uses(path, names | frozenset(aliases)) or where
        for name, uses in where.uses.items():
            for target, line in targets:
                if target.definition.name != name and target not in aliases.get(name, ()):
                    continue
                common = is_member(target) and len({r.path for r in rivals.get(name, [])}) > settings.ambiguous_name \
                    or files.declared_only(target)
                others = [r for r in rivals.get(name, []) if r != target]
                for use in uses:
                    d = target.definition
                    if path == target.path and d.start <= use.line <= d.end or use.line in touched.get(path, ()):
                        continue
                    strength = files.refers(use, where, target, others)
                    if strength == NO or strength == MAYBE and (common or is_built(path)):
                        continue
                    holder = _holder(where, use.line, touched.get(path, set()))
                    if holder is not None and path in touched and any(
                            holder.start <= n <= holder.end for n in touched[path]):
                        continue  # changed itself: the diff shows it
                    key = (target.path, d.start, d.name, path, holder.start if holder else -use.line)
                    caller = found.setdefault(key, _Caller(target, line, path, holder, [], strength,
                                                           _between(where, use.line)))
                    caller.lines.append(use.line)
                    caller.strength = max(caller.strength, strength)
    return _ranked_callers(list(found.values()), settings)


def _holder(where: FileUses, line: int, touched: set[int]) -> Definition | None:
    """The function a use is in. A script's constant made by a call whose callback holds the use
    (`export const Thing = make('Thing', (inst) => { … })`) is none: its uses are statements of that
    callback, each its own caller, and the diff does not show them for touching another line of it."""
    holder = where.caller_of(line)
    if holder is not None and holder.kind in VALUE_KINDS and where.language in SCRIPT_LANGUAGES \
            and any(holder.start <= n <= holder.end for n in touched):
        return None
    return holder


def _caller_paths(files: Files, store: IndexStore, targets: list[Located], changed: set[str],
                  settings: Settings) -> tuple[list[str], frozenset[str]]:
    """The files to read for callers: those that use the targets' names, those that import a
    changed default export (bot/index/modules.py), and those that use a name a module re-exports
    a target under (`export { parse as parseSize } from './size'`); and those re-exported names."""
    names = frozenset(t.definition.name for t in targets)
    # Files that reach a target only under another name (its importers' own, a re-export's) are
    # read in the primary sources only: tests reach most of a package through its public names,
    # and would take the budget from the callers that the code itself has.
    referring = {r.path for r in store.references(names, limit=5000)}
    referring |= {p for p in files.modules.importers(targets) if not is_test(p)}
    paths = sorted(referring - changed, key=lambda p: (is_test(p), p))
    paths = [p for p in changed if files.text(p) is not None] + paths[:settings.max_caller_files]
    renamed = set()
    for path in paths:
        where = files.uses(path, names)
        for alias, found in (where.bindings.exports.items() if where is not None else ()):
            if found.name in names and alias not in names:
                renamed.add(alias)
    if renamed:
        more = {r.path for r in store.references(renamed, limit=5000) if not is_test(r.path)} - changed - set(paths)
        paths += sorted(more, key=lambda p: (is_test(p), p))[:max(0, settings.max_caller_files - len(paths))]
    return paths, frozenset(renamed)


def _ranked_callers(callers: list[_Caller], settings: Settings) -> list[Candidate]:
    """Primary sources before tests and examples; what the files say before guesses; nearer the
    changed definition first; each changed definition's callers taking turns."""
    per_target: dict[tuple[str, int, str], list[_Caller]] = {}
    for caller in callers:
        per_target.setdefault((caller.target.path, caller.target.definition.start, caller.target.definition.name),
                              []).append(caller)
    ranked: list[tuple[tuple, Candidate]] = []
    for group in per_target.values():
        group.sort(key=lambda c: (is_test(c.path) and not is_test(c.target.path), c.strength != YES,
                                  distance(c.path, c.target.path), c.path, min(c.lines)))
        for index, caller in enumerate(group):
            if index >= (settings.max_sure_callers_per_name if caller.strength == YES else settings.max_callers_per_name):
                continue
            tier = (is_test(caller.path) and not is_test(caller.target.path), caller.strength != YES)
            ranked.append(((*tier, index), _window(caller, settings, brief=index >= settings.callers_in_full)))
    return [c for _, c in sorted(ranked, key=lambda item: item[0])]


def _between(where: FileUses, line: int) -> tuple[int, int]:
    """The lines around `line` that no definition holding other lines takes (a module-level
    statement's neighbourhood, up to the functions before and after it)."""
    low, high = 1, 1 << 30
    for d in where.definitions:
        if d.end < line:
            low = max(low, d.end + 1)
        elif d.start > line:
            high = min(high, d.start - 1)
    return low, high


def _window(caller: _Caller, settings: Settings, brief: bool = False) -> Candidate:
    """A short caller whole; a long one from its first use, as far as the piece holds. `brief`: a
    name with many callers shows the rest as call sites (the use and a line either side), so that
    a change to a function used everywhere still shows where it is used within the budget."""
    first, w = min(caller.lines), settings.caller_window
    holder, target = caller.holder, caller.target
    if brief:
        low, high = (holder.start, holder.end) if holder is not None else caller.bounds
        start, end = max(low, first - settings.call_site_window), min(high, first + settings.call_site_window)
    elif holder is not None and holder.end - holder.start < 2 * w + 4:
        start, end = holder.start, holder.end
    elif holder is not None:
        start, end = max(holder.start, first - w), min(holder.end, max(caller.lines) + w)
    else:  # a statement outside any function: the lines around it, none of a function beside it
        start, end = max(caller.bounds[0], first - w // 2), min(caller.bounds[1], first + w // 2)
    d = target.definition
    symbol = holder.name if holder is not None else d.name
    return Candidate(caller.path, start, end, symbol, "caller",
                      f"uses {d.name}, whose definition changed at {target.path}:{caller.line}", first)


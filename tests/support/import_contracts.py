"""An import-linter contract for a submodule of an outside package (`aiohttp.web`), run by `make test`.

import-linter's own `forbidden` contract cannot say "aiohttp.web only inside bot.server": its graph
keeps an outside package by its top-level name only (`aiohttp`), and the client half of aiohttp is
used everywhere. This contract reads the import lines the graph recorded for that package instead:
`from aiohttp import web`, `import aiohttp.web` and `from aiohttp.web import ...` count, outside the
allowed packages and the listed exceptions (`ignore_imports`, as `importer -> aiohttp.web`).
"""

from __future__ import annotations

import re

from importlinter import Contract, ContractCheck, fields, output


class ForbiddenSubmoduleContract(Contract):
    forbidden_module = fields.StringField()  # dotted: the outside package, then the submodule
    allowed_modules = fields.ListField(subfield=fields.StringField())
    ignore_imports = fields.ListField(subfield=fields.StringField(), required=False)

    def check(self, graph, verbose: bool) -> ContractCheck:
        package, _, sub = str(self.forbidden_module).partition(".")
        allowed = [str(m) for m in self.allowed_modules]  # type: ignore[attr-defined]
        ignored = {tuple(part.strip() for part in str(i).split("->")) for i in (self.ignore_imports or [])}
        line = re.compile(rf"^\s*(from\s+{package}\s+import\s+.*\b{sub}\b|import\s+{package}\.{sub}\b|"
                          rf"from\s+{package}\.{sub}\b)")
        violations: list[str] = []
        matched: set[tuple[str, ...]] = set()
        for importer in sorted(graph.find_modules_that_directly_import(package)):
            if any(importer == m or importer.startswith(m + ".") for m in allowed):
                continue
            for detail in graph.get_import_details(importer=importer, imported=package):
                if not line.match(detail["line_contents"]):
                    continue
                if (importer, str(self.forbidden_module)) in ignored:
                    matched.add((importer, str(self.forbidden_module)))
                    continue
                violations.append(f"{importer} -> {self.forbidden_module} (l.{detail['line_number']})")
        unmatched = sorted(ignored - matched)
        violations += [f"ignored import not found: {' -> '.join(i)}" for i in unmatched]
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for violation in check.metadata["violations"]:
            output.print_error(f"- {violation}")
            output.new_line()

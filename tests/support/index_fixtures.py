"""Small repositories, one per language, whose definitions and callers are known.

Also: the PostgreSQL database the index's store tests use.

Each language has a library file that defines a function (`compute_total` in the language's
naming style) and a class, and an app file whose function calls it. `lines` are the function's
definition lines in the library file, `caller` the calling function's name and its lines.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LanguageFixture:
    language: str
    lib: str
    lib_text: str
    app: str
    app_text: str  # calls the function from inside `caller`
    function: str
    lines: tuple[int, int]
    klass: str
    caller: str
    caller_lines: tuple[int, int]

    def app_changed(self) -> str:
        """The app with the calling line changed (a new argument name), still calling the function."""
        return self.app_text.replace("rows", "entries")

    def lib_changed(self) -> str:
        """The library with the function's body changed (a new line inside it)."""
        lines = self.lib_text.splitlines(keepends=True)
        body = lines[self.lines[0]]  # the first line of the body: copy its indentation
        indent = body[: len(body) - len(body.lstrip())]
        comment = "# " if self.language in ("python", "ruby") else "// "
        lines.insert(self.lines[0], f"{indent}{comment}totals are sums\n")
        return "".join(lines)


FIXTURES = [
    LanguageFixture(
        "python", "shop/lib.py",
        "def compute_total(items):\n    return sum(items)\n\n\nclass Ledger:\n    def add(self, amount):\n"
        "        return amount\n",
        "app/report.py", "from shop.lib import compute_total\n\n\ndef report_totals(rows):\n"
        "    return compute_total(rows)\n",
        "compute_total", (1, 2), "Ledger", "report_totals", (4, 5)),
    LanguageFixture(
        "javascript", "shop/lib.js",
        "export function computeTotal(items) {\n  return items.reduce((a, b) => a + b, 0);\n}\n\n"
        "export class Ledger {\n  add(amount) {\n    return amount;\n  }\n}\n",
        "app/report.js", "import { computeTotal } from '../shop/lib.js';\n\nexport function reportTotals(rows) {\n"
        "  return computeTotal(rows);\n}\n",
        "computeTotal", (1, 3), "Ledger", "reportTotals", (3, 5)),
    LanguageFixture(
        "typescript", "shop/lib.ts",
        "export function computeTotal(items: number[]): number {\n  return items.reduce((a, b) => a + b, 0);\n}\n\n"
        "export class Ledger {\n  add(amount: number): number {\n    return amount;\n  }\n}\n",
        "app/report.ts", "import { computeTotal } from '../shop/lib';\n\nexport function reportTotals(rows: number[]): number {\n"
        "  return computeTotal(rows);\n}\n",
        "computeTotal", (1, 3), "Ledger", "reportTotals", (3, 5)),
    LanguageFixture(
        "go", "shop/lib.go",
        "package shop\n\nfunc ComputeTotal(items []int) int {\n\ttotal := 0\n\tfor _, i := range items {\n"
        "\t\ttotal += i\n\t}\n\treturn total\n}\n\ntype Ledger struct{}\n",
        "app/report.go", "package shop\n\nfunc ReportTotals(rows []int) int {\n\treturn ComputeTotal(rows)\n}\n",
        "ComputeTotal", (3, 9), "Ledger", "ReportTotals", (3, 5)),
    LanguageFixture(
        "java", "shop/Lib.java",
        "public class Lib {\n  public static int computeTotal(int[] items) {\n    int total = 0;\n"
        "    for (int i : items) total += i;\n    return total;\n  }\n}\n",
        "app/Report.java", "public class Report {\n  int reportTotals(int[] rows) {\n    return Lib.computeTotal(rows);\n"
        "  }\n}\n",
        "computeTotal", (2, 6), "Lib", "reportTotals", (2, 4)),
    LanguageFixture(
        "rust", "shop/lib.rs",
        "pub fn compute_total(items: &[i32]) -> i32 {\n    items.iter().sum()\n}\n\npub struct Ledger;\n",
        "app/report.rs", "use crate::shop::compute_total;\n\npub fn report_totals(rows: &[i32]) -> i32 {\n"
        "    compute_total(rows)\n}\n",
        "compute_total", (1, 3), "Ledger", "report_totals", (3, 5)),
    LanguageFixture(
        "c", "shop/lib.c",
        "int compute_total(const int *items, int n) {\n    int total = 0;\n    for (int i = 0; i < n; i++) total += items[i];\n"
        "    return total;\n}\n\nstruct Ledger { int amount; };\n",
        "app/report.c", "int compute_total(const int *items, int n);\n\nint report_totals(const int *rows, int n) {\n"
        "    return compute_total(rows, n);\n}\n",
        "compute_total", (1, 5), "Ledger", "report_totals", (3, 5)),
    LanguageFixture(
        "cpp", "shop/lib.cpp",
        "int compute_total(const std::vector<int>& items) {\n  int total = 0;\n  for (int i : items) total += i;\n"
        "  return total;\n}\n\nclass Ledger {\n public:\n  int add(int amount) { return amount; }\n};\n",
        "app/report.cpp", "int report_totals(const std::vector<int>& rows) {\n  return compute_total(rows);\n}\n",
        "compute_total", (1, 5), "Ledger", "report_totals", (1, 3)),
    LanguageFixture(
        "csharp", "shop/Lib.cs",
        "public static class Lib {\n  public static int ComputeTotal(int[] items) {\n    var total = 0;\n"
        "    foreach (var i in items) total += i;\n    return total;\n  }\n}\n",
        "app/Report.cs", "public class Report {\n  public int ReportTotals(int[] rows) {\n    return Lib.ComputeTotal(rows);\n"
        "  }\n}\n",
        "ComputeTotal", (2, 6), "Lib", "ReportTotals", (2, 4)),
    LanguageFixture(
        "ruby", "shop/lib.rb",
        "def compute_total(items)\n  items.sum\nend\n\nclass Ledger\n  def add(amount)\n    amount\n  end\nend\n",
        "app/report.rb", "def report_totals(rows)\n  compute_total(rows)\nend\n",
        "compute_total", (1, 3), "Ledger", "report_totals", (1, 3)),
    LanguageFixture(
        "php", "shop/lib.php",
        "<?php\nfunction compute_total(array $items): int {\n    return array_sum($items);\n}\n\nclass Ledger {\n"
        "    public function add(int $amount): int {\n        return $amount;\n    }\n}\n",
        "app/report.php", "<?php\nfunction report_totals(array $rows): int {\n    return compute_total($rows);\n}\n",
        "compute_total", (2, 4), "Ledger", "report_totals", (2, 4)),
    LanguageFixture(
        "kotlin", "shop/Lib.kt",
        "fun computeTotal(items: List<Int>): Int {\n    return items.sum()\n}\n\nclass Ledger {\n"
        "    fun add(amount: Int): Int = amount\n}\n",
        "app/Report.kt", "fun reportTotals(rows: List<Int>): Int {\n    return computeTotal(rows)\n}\n",
        "computeTotal", (1, 3), "Ledger", "reportTotals", (1, 3)),
]


# A Python pricing module and a checkout that starts calling it: the end-to-end tests of the index
# and of the model's lookups (tests/app/test_app_lookups.py) review this change.
PRICING = ("RATE_LIMIT = 3\n"                       # 1
           "\n"                                     # 2
           "def apply_discount(total, rate):\n"     # 3
           "    if rate > 0.5:\n"                   # 4
           "        raise ValueError(rate)\n"       # 5
           "    return total * (1 - rate)\n")       # 6
CHECKOUT_BASE = "def checkout(cart):\n    return sum(cart)\n"
CHECKOUT_HEAD = ("from src.pricing import apply_discount\n"
                 "\n"
                 "def checkout(cart):\n"
                 "    return apply_discount(sum(cart), 0.9)\n")  # 4: the changed line that calls it; raises: 0.9 > 0.5

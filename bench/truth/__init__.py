"""The ground truth of bench/context_cases.json, derived mechanically (bench/context_truth.py runs
it and says the rules): `model` (a definition, a file's language), `text` (comments and strings
out, a definition's extent), one module per language's own rules (`python`, `javascript` for
JavaScript and TypeScript, `go`, `java`, `rust`), `tags` (the definitions of a tree: ctags plus
those rules) and `derive` (one case's truth, acceptable items and notes).
"""

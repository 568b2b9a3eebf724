"""The expression languages of the configuration: doublestar globs and CEL over `pr`.

Pure and shared by the config validator (syntax and bounds), the planner and the CLI.
"""

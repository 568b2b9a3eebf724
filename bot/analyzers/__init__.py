"""Analyzers beside the model: SARIF from CI, other formats converted to SARIF, built-in scanners.

Everything an analyzer says takes one path: a SARIF 2.1.0 document is read into results
(`sarif.read_sarif`), the results are filtered to the pull request's diff as reviewdog's modes do
(`filter.place`), and each placed result is a finding (`findings.AnalyzerFinding`) that the feed
(`feed.entries`) puts in the head's ledger beside the model's (bot/reviews/ledger.py), with the
severity linters and the admin file give it (`model`, `severity`). An upload (`upload.decode_upload`), a reviewdog or checkstyle report
(`convert`) and the built-in analyzers (`builtin.run_builtins`) all enter through that one reader.
"""

"""The ground floor for documents: bounded YAML and JSON loading that remembers positions,
JSON pointers and the diagnostics every loader returns. Imports nothing else of bot."""

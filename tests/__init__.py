"""The test suite: one folder per package of bot/ (see docs/architecture.md)."""

"""The review plan: the `pr` object, the planner, and `reviewer plan` (offline, from git)."""

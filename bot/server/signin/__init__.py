"""The sign-in endpoints (docs/connectors.md "Signing in"): routes, pages, session cookies and the
request side of the gate. The protocols and the decisions they make are bot/auth/."""

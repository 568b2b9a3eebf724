"""Signing in through the connectors: the OIDC relying party, sessions, roles and access.

Pure parts (role mapping, access decisions, redirect checks, token checks) take data and return
data; the I/O (the provider's endpoints, the sign-in store, the HTTP routes) sits at the edges.
"""

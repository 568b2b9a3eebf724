"""OpenID Connect sign-in: the flow (flow.py), the provider's discovery and keys (provider.py), the
ID token's checks (token.py)."""

"""SAML sign-in: the AuthnRequest, the response's checks and the SP metadata (protocol.py), the
algorithms allowed (algorithms.py), the IdP's metadata (descriptor.py), a connector's settings
(settings.py) and single logout's messages (logout.py)."""

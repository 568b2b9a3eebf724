"""SSO connector resources (OIDC v3, SAML v2): structure, reconcile, store and resource API.

Two phases, as a Kubernetes API server and its controller would run them: the structural schema
(`schema_*`) refuses a malformed body; a well-formed one is stored and then reconciled
(`reconcile_*`), whose findings become the `SuccessfullyReconciled` condition. The pure parts
(schemas, reconcile, conditions, redaction) are shared by the HTTP API and `reviewer validate`;
I/O lives in `store`, `secrets` and `api`. Nothing here imports aiohttp except `api`. Text from
users goes through parsers that never raise: `safe_parse` (regular expressions, XML) and `urls`
(URLs, as Go's net/url reads them).
"""

"""The HTTP APIs besides the console, the sign-in endpoints and the connector resources, each behind
the sign-in gate: the admin API (`admin`: a repository's configuration, read through
`config_reader`; `deliveries`: redelivery), the audit log (`audit`), the learnings (`learnings`)
and SARIF uploads from CI (`uploads`). They read requests and answer; the decisions are below."""

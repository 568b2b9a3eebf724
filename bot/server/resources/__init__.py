"""The connector resource API (docs/api.md "The connector resource API"): its routes and HTTP edges.
What a document must pass and how it is reconciled are bot/connectors/."""

"""The ground floor for secrets: `secret://` references and their store (`references`), AEAD
sealing (`aead`) and the registry every log line is scrubbed of (`redaction`)."""

"""The audit log: hash-chained, content-free events of every write and every refusal, the
`Actor` every service takes, and the chain's verifier (`audit_verify`). The lowest app: every
other app writes its events here, in the same transaction as its change."""

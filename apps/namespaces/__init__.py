"""Namespaces (a team's memory space: the unit of access, retention and PII policy),
their members and roles, and PII screening (`pii`, pure), which the store applies to every
write. Below accounts and the store, above the audit log."""

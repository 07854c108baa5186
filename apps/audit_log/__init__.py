"""Reading the audit log: its API (and the dashboard's viewer), which stand on API keys and
logins (accounts) and so sit above them; the log itself is `apps.audit`, the lowest app."""

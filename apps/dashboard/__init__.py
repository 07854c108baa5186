"""The dashboard: every page admins and operators use, one subpackage per area (its urls,
views, and the forms and filters it alone uses), over the domain apps' services and
selectors. No domain app imports it (import-linter's contracts in pyproject.toml)."""

"""Atomic facts from what a person says (pure: no Django, no database)."""

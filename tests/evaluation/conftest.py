"""The quality pages use the dashboard's cast (tests/governance/conftest.py)."""

from tests.governance.conftest import cast

__all__ = ["cast"]

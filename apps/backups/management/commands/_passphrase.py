"""The escrow passphrase: MEMORYHUB_ESCROW_PASSPHRASE, or asked for at the terminal."""

from __future__ import annotations

import getpass
import os

from django.core.management.base import CommandError


def passphrase(*, confirm: bool) -> str:
    given = os.environ.get("MEMORYHUB_ESCROW_PASSPHRASE")
    if given:
        return given
    try:
        first = getpass.getpass("Escrow passphrase: ")
        if confirm and getpass.getpass("The same passphrase again: ") != first:
            raise CommandError("The two passphrases differ.")
    except EOFError:
        first = ""
    if not first:
        raise CommandError("No passphrase: set MEMORYHUB_ESCROW_PASSPHRASE or type one.")
    return first

"""The `memoryhub` command: Django's management commands for this project.

`memoryhub migrate`, `memoryhub runserver`, `memoryhub embedded_db status` and so on:
the same as `python manage.py ...`, usable from any directory once installed.
`memoryhub mcp` is MemoryHub's MCP tools over stdio, for desktop clients (memoryhub/mcp_stdio.py).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    argv = argv if argv is not None else sys.argv
    if argv[1:2] == ["mcp"]:  # a relay to a running server: no Django, no database
        from memoryhub.mcp_stdio import main as relay

        relay(argv[2:])
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(argv)


if __name__ == "__main__":
    main()

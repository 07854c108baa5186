#!/usr/bin/env python
"""Django's command-line utility for MemoryHub (the same as the `memoryhub` command)."""

from memoryhub.cli import main

if __name__ == "__main__":
    main()

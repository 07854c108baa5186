"""Logging filters: what must never reach a log line."""

from __future__ import annotations

import logging
import re

# A privacy-portal link's token is a bearer secret until spent (and proof of a person's
# link after): Django's request and server logs would write the path it sits in.
PORTAL_TOKEN = re.compile(r"(/portal/enter/)[^\s/?#\"']+")


class PortalTokenFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "/portal/enter/" in message:
            record.msg = PORTAL_TOKEN.sub(r"\1[token]", message)
            record.args = ()
        return True

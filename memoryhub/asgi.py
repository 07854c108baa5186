"""The ASGI application. Tracing is set up first, when configured (memoryhub/tracing.py):
its middleware must be in place before Django builds the handler."""

import os

from django.core.asgi import get_asgi_application

from memoryhub import tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
tracing.set_up()
application = get_asgi_application()

"""The WSGI application (gunicorn, and `runserver` through WSGI_APPLICATION). Tracing is set
up first, when configured (memoryhub/tracing.py): its middleware must be in place before
Django builds the handler."""

import os

from django.core.wsgi import get_wsgi_application

from memoryhub import tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
tracing.set_up()
application = get_wsgi_application()

"""The WSGI entry point, for servers that speak only WSGI (production runs apps/asgi.py)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")
application = get_wsgi_application()

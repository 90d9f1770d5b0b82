"""The delivery log keeps a status and the kind of failure, never what a receiver sent. Rows
written before that rule may hold a failed answer's body (the error column held up to 500
characters of it) or an exception's text quoting it: this clears them."""

import re

from django.db import migrations

# The old failure text: "<ExceptionName>: <its message>". The name is kept, the rest may quote
# the receiver.
EXCEPTION_TEXT = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*): ")


def clear_bodies(apps, schema_editor):
    Delivery = apps.get_model("regressions", "Delivery")
    # A status came back: the error column could only be the answer's body.
    Delivery.objects.filter(status_code__isnull=False).exclude(error="").update(error="")
    for delivery in Delivery.objects.filter(status_code__isnull=True, error__contains=": "):
        kind = EXCEPTION_TEXT.match(delivery.error)
        delivery.error = kind.group(1) if kind else ""
        delivery.save(update_fields=["error"])


class Migration(migrations.Migration):
    dependencies = [("regressions", "0001_initial")]

    operations = [migrations.RunPython(clear_bodies, migrations.RunPython.noop)]

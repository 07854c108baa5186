# Keys carry the namespace (memoryhub/distribution.py): primary keys (id, namespace_id), and
# foreign keys between the webhook tables (column, namespace_id), which Django's do not make.
# Row-level security walls each table by its namespace_id (memoryhub/row_security.py).

from django.db import migrations

from memoryhub import distribution as d
from memoryhub.row_security import wall_sql

TABLES = (
    "webhooks_webhookendpoint",
    "webhooks_webhookevent",
    "webhooks_webhookdelivery",
    "webhooks_webhookattempt",
)
FOREIGN_KEYS = (
    ("webhooks_webhookdelivery", "event_id", "webhooks_webhookevent"),
    ("webhooks_webhookdelivery", "endpoint_id", "webhooks_webhookendpoint"),
    ("webhooks_webhookattempt", "delivery_id", "webhooks_webhookdelivery"),
)


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently

    dependencies = [("webhooks", "0001_initial")]

    operations = [
        *(d.key_index(table) for table in TABLES),
        *(d.foreign_key(table, column, target) for table, column, target in FOREIGN_KEYS),
        *(d.primary_key(table) for table in TABLES),
        *(d.validate(table, column) for table, column, _target in FOREIGN_KEYS),
        *(migrations.RunSQL(*wall_sql(table)) for table in TABLES),
    ]

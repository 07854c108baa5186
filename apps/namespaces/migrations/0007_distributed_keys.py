# A membership's primary key carries its namespace (memoryhub/distribution.py).

from django.db import migrations

from memoryhub import distribution as d


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently

    dependencies = [
        ("namespaces", "0006_recall_config"),
    ]

    operations = [
        d.key_index("namespaces_membership"),
        d.primary_key("namespaces_membership"),
    ]

# A subject's primary key carries its namespace, now that every foreign key to it does
# (memoryhub/distribution.py).

from django.db import migrations

from memoryhub import distribution as d


class Migration(migrations.Migration):
    atomic = False  # each key change is its own transaction (memoryhub/distribution.py)

    dependencies = [
        ("memories", "0021_distributed_keys"),
        ("pipeline", "0009_distributed_keys"),
        ("recall", "0008_distributed_keys"),
        ("evaluation", "0005_distributed_keys"),
        ("privacy", "0005_distributed_keys"),
    ]

    operations = [
        d.primary_key("memories_subject"),
    ]

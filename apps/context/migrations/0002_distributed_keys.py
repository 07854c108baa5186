# The primary key carries the namespace (memoryhub/distribution.py).

from django.db import migrations

from memoryhub import distribution as d


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently

    dependencies = [
        ("context", "0001_initial"),
    ]

    operations = [
        d.key_index("context_playgroundconfig"),
        d.primary_key("context_playgroundconfig"),
    ]

# The key-to-namespace rows' primary key carries the namespace (memoryhub/distribution.py).

from django.db import migrations

from memoryhub import distribution as d


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently

    dependencies = [
        ("accounts", "0003_api_key_default_subject"),
    ]

    operations = [
        d.key_index("accounts_apikey_namespaces"),
        d.primary_key("accounts_apikey_namespaces"),
    ]

"""Row-level security on the portal's tables (memoryhub/row_security.py)."""

from django.db import migrations

from memoryhub.row_security import wall_sql



class Migration(migrations.Migration):
    dependencies = [("privacy", "0001_initial"), ("memories", "0013_row_security")]
    operations = [
        migrations.RunSQL(*wall_sql(table))
        for table in ("privacy_portallink", "privacy_portalsession", "privacy_schedulederasure")
    ]

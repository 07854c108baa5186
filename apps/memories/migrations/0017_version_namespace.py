# The namespace of a memory's versions, copied from the memory: the column a distributed table
# is spread by. Added empty here, filled by 0018, made required by 0019.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0016_disputed_status'),
        ('namespaces', '0006_recall_config'),
    ]

    operations = [
        migrations.AddField(
            model_name='memoryversion',
            name='namespace',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace'),
        ),
    ]

# The namespace of a session's turns and summaries, copied from the session: the column a
# distributed table is spread by. Added empty here, filled by 0006, made required by 0007.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('pipeline', '0004_disputed_status'),
        ('namespaces', '0006_recall_config'),
    ]

    operations = [
        migrations.AddField(
            model_name='message',
            name='namespace',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace'),
        ),
        migrations.AddField(
            model_name='sessionsummary',
            name='namespace',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='namespaces.namespace'),
        ),
    ]

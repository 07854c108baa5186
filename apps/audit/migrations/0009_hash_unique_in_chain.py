# The audit events' keys carry their chain, the distribution column of the events table
# (memoryhub/distribution.py): the primary key (id, chain), and a hash is unique in its chain.

from django.db import migrations, models

from memoryhub import distribution as d


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently: the table is large and always written

    dependencies = [
        ("audit", "0008_chain_index"),
    ]

    operations = [
        d.key_index("audit_auditevent", "chain"),
        d.primary_key("audit_auditevent", "chain"),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddConstraint(
                    model_name="auditevent",
                    constraint=models.UniqueConstraint(
                        fields=("hash", "chain"), name="one_event_per_hash_in_chain"
                    ),
                ),
            ],
            database_operations=d.unique(
                "audit_auditevent", "one_event_per_hash_in_chain", ("hash", "chain")
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="auditevent",
                name="hash",
                field=models.CharField(max_length=64),
            ),
        ),
    ]

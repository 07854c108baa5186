# Keys carry the namespace (memoryhub/distribution.py): primary keys (id, namespace_id), and
# foreign keys between the namespace's tables (column, namespace_id), which Django's no longer
# make.
# The secrets' hashes are unique in their namespace, hash first (found by it alone as well).

import django.db.models.deletion
from django.db import migrations, models

from memoryhub import distribution as d


class Migration(migrations.Migration):
    atomic = False  # indexes built concurrently

    dependencies = [
        ("memories", "0021_distributed_keys"),
        ("namespaces", "0006_recall_config"),
        ("privacy", "0004_keys_carry_namespace"),
    ]

    operations = [
        d.key_index("privacy_portallink"),
        d.key_index("privacy_portalsession"),
        d.key_index("privacy_schedulederasure"),
        d.key_index("privacy_erasurereceiptcode"),
        d.foreign_key("privacy_portallink", "subject_id", "memories_subject"),
        d.foreign_key("privacy_portalsession", "subject_id", "memories_subject"),
        d.foreign_key("privacy_portalsession", "link_id", "privacy_portallink"),
        d.foreign_key("privacy_schedulederasure", "subject_id", "memories_subject"),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddConstraint(
                    model_name="erasurereceiptcode",
                    constraint=models.UniqueConstraint(
                        fields=("code_hash", "namespace"), name="one_receipt_per_code"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="portallink",
                    constraint=models.UniqueConstraint(
                        fields=("token_hash", "namespace"), name="one_link_per_token"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="portalsession",
                    constraint=models.UniqueConstraint(
                        fields=("key_hash", "namespace"), name="one_session_per_key"
                    ),
                ),
            ],
            database_operations=[
                *d.unique(
                    "privacy_erasurereceiptcode",
                    "one_receipt_per_code",
                    ("code_hash", "namespace_id"),
                ),
                *d.unique(
                    "privacy_portallink", "one_link_per_token", ("token_hash", "namespace_id")
                ),
                *d.unique(
                    "privacy_portalsession", "one_session_per_key", ("key_hash", "namespace_id")
                ),
            ],
        ),
        d.Retried(
            migrations.AlterField(
                model_name="erasurereceiptcode",
                name="code_hash",
                field=models.CharField(max_length=64),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="portallink",
                name="subject",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="portal_links",
                    to="memories.subject",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="portallink",
                name="token_hash",
                field=models.CharField(max_length=64),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="portalsession",
                name="key_hash",
                field=models.CharField(max_length=64),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="portalsession",
                name="link",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="privacy.portallink",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="portalsession",
                name="subject",
                field=models.ForeignKey(
                    db_constraint=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="portal_sessions",
                    to="memories.subject",
                ),
            ),
        ),
        d.Retried(
            migrations.AlterField(
                model_name="schedulederasure",
                name="subject",
                field=models.ForeignKey(
                    db_constraint=False,
                    db_index=False,
                    on_delete=django.db.models.deletion.CASCADE,
                    related_name="+",
                    to="memories.subject",
                ),
            ),
        ),
        d.primary_key("privacy_portallink"),
        d.primary_key("privacy_portalsession"),
        d.primary_key("privacy_schedulederasure"),
        d.primary_key("privacy_erasurereceiptcode"),
        d.validate("privacy_portallink", "subject_id"),
        d.validate("privacy_portalsession", "subject_id"),
        d.validate("privacy_portalsession", "link_id"),
        d.validate("privacy_schedulederasure", "subject_id"),
    ]

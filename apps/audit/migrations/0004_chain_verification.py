"""The record of each walk of the audit hash chain (hourly on beat, or "verify now")."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("audit", "0003_chain_head")]

    operations = [
        migrations.CreateModel(
            name="ChainVerification",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("started_at", models.DateTimeField()),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("running", "Running"),
                            ("succeeded", "Intact"),
                            ("failed", "Could not finish"),
                            ("broken", "Broken"),
                        ],
                        default="running",
                        max_length=16,
                    ),
                ),
                ("requested_by", models.CharField(max_length=200)),
                ("full", models.BooleanField(default=False)),
                ("from_event_id", models.BigIntegerField(blank=True, null=True)),
                ("to_check", models.BigIntegerField(default=0)),
                ("checked", models.BigIntegerField(default=0)),
                ("through_event_id", models.BigIntegerField(blank=True, null=True)),
                ("through_at", models.DateTimeField(blank=True, null=True)),
                ("through_hash", models.CharField(blank=True, max_length=64)),
                ("broken_event_id", models.BigIntegerField(blank=True, null=True)),
                ("broken_reason", models.CharField(blank=True, max_length=200)),
            ],
            options={
                "ordering": ["-id"],
                "indexes": [
                    models.Index(fields=["-finished_at", "-id"], name="verification_newest")
                ],
            },
        ),
    ]

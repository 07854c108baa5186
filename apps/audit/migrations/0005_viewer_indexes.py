"""The audit viewer's indexes: one per filter, each ending in the id (newest first).

Built concurrently, without locking out the appends every write makes; the subject index
gains the id before the old one goes, so subject lookups always have an index."""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("audit", "0004_chain_verification")]

    operations = [
        AddIndexConcurrently(
            model_name="auditevent",
            index=models.Index(fields=["subject_id", "id"], name="audit_by_subject_newest"),
        ),
        RemoveIndexConcurrently(model_name="auditevent", name="audit_by_subject"),
        AddIndexConcurrently(
            model_name="auditevent",
            index=models.Index(fields=["action", "id"], name="audit_by_action"),
        ),
        AddIndexConcurrently(
            model_name="auditevent",
            index=models.Index(fields=["actor_name", "id"], name="audit_by_actor"),
        ),
        AddIndexConcurrently(
            model_name="auditevent",
            index=models.Index(fields=["outcome", "id"], name="audit_by_outcome"),
        ),
        AddIndexConcurrently(
            model_name="auditevent",
            index=models.Index(fields=["created_at", "id"], name="audit_by_time"),
        ),
    ]

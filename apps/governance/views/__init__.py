"""The governance pages of a namespace: explorer, memory detail and its actions, review
queue, bulk changes, purge, subjects.

Who sees what: a namespace the user is not a member of is a 404 on every URL here (as in the
API); a member whose role is too low for a write gets 403. `viewer` reads; `editor` edits,
approves, archives, restores, merges, rolls back and deletes single memories, and pauses
subjects; `owner` also purges, bulk-deletes and erases. Superusers are owners everywhere.
Every page that shows decrypted content records that read in the audit log (ids, never
text). One view and one template serve a page and its htmx fragment.
"""

from apps.governance.views.explorer import bulk, explorer, job, namespace_pick, purge
from apps.governance.views.memory import (
    memory_action,
    memory_detail,
    memory_edit,
    memory_feedback,
    memory_remove,
    review,
    review_merge,
)
from apps.governance.views.namespaces import (
    member_change,
    members,
    namespace_list,
    namespace_settings,
)
from apps.governance.views.overview import overview
from apps.governance.views.subjects import (
    subject_detail,
    subject_download,
    subject_pause,
    subject_portal_link,
    subject_remove,
    subjects,
)

__all__ = [
    "bulk",
    "explorer",
    "job",
    "member_change",
    "members",
    "memory_action",
    "memory_detail",
    "memory_edit",
    "memory_feedback",
    "memory_remove",
    "namespace_list",
    "namespace_pick",
    "namespace_settings",
    "overview",
    "purge",
    "review",
    "review_merge",
    "subject_detail",
    "subject_download",
    "subject_pause",
    "subject_portal_link",
    "subject_remove",
    "subjects",
]

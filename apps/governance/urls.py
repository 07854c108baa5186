from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from apps.governance import views

app_name = "governance"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("n/<slug:slug>/", views.overview, name="namespace_overview"),
    path("memories/", views.namespace_pick, name="pick"),
    path("namespaces/", views.namespace_list, name="namespaces"),
    path("n/<slug:slug>/settings/", views.namespace_settings, name="namespace_settings"),
    path("n/<slug:slug>/members/", views.members, name="members"),
    path("n/<slug:slug>/members/change/", views.member_change, name="member_change"),
    # An invited user's one-time link: Django's password-reset token, void once used.
    path(
        "accounts/set-password/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            template_name="governance/set_password.html",
            success_url=reverse_lazy("accounts:login"),
            post_reset_login=False,
        ),
        name="set_password",
    ),
    path("n/<slug:slug>/memories/", views.explorer, name="explorer"),
    path("n/<slug:slug>/memories/bulk/", views.bulk, name="bulk"),
    path("n/<slug:slug>/memories/purge/", views.purge, name="purge"),
    path("n/<slug:slug>/jobs/<str:job_id>/", views.job, name="job"),
    path("n/<slug:slug>/memories/<str:memory_id>/", views.memory_detail, name="memory"),
    path("n/<slug:slug>/memories/<str:memory_id>/edit/", views.memory_edit, name="memory_edit"),
    path(
        "n/<slug:slug>/memories/<str:memory_id>/feedback/",
        views.memory_feedback,
        name="memory_feedback",
    ),
    path(
        "n/<slug:slug>/memories/<str:memory_id>/action/", views.memory_action, name="memory_action"
    ),
    path(
        "n/<slug:slug>/memories/<str:memory_id>/delete/", views.memory_remove, name="memory_delete"
    ),
    path("n/<slug:slug>/review/", views.review, name="review"),
    path("n/<slug:slug>/review/merge/", views.review_merge, name="review_merge"),
    path("n/<slug:slug>/subjects/", views.subjects, name="subjects"),
    path("n/<slug:slug>/subjects/<str:subject_id>/", views.subject_detail, name="subject"),
    path(
        "n/<slug:slug>/subjects/<str:subject_id>/export/",
        views.subject_download,
        name="subject_export",
    ),
    path(
        "n/<slug:slug>/subjects/<str:subject_id>/portal-link/",
        views.subject_portal_link,
        name="subject_portal_link",
    ),
    path(
        "n/<slug:slug>/subjects/<str:subject_id>/pause/", views.subject_pause, name="subject_pause"
    ),
    path(
        "n/<slug:slug>/subjects/<str:subject_id>/erase/", views.subject_remove, name="subject_erase"
    ),
]

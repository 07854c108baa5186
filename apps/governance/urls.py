from django.urls import path

from apps.governance import views

app_name = "governance"

urlpatterns = [
    path("memories/", views.namespace_pick, name="pick"),
    path("n/<slug:slug>/memories/", views.explorer, name="explorer"),
    path("n/<slug:slug>/memories/bulk/", views.bulk, name="bulk"),
    path("n/<slug:slug>/memories/purge/", views.purge, name="purge"),
    path("n/<slug:slug>/jobs/<str:job_id>/", views.job, name="job"),
    path("n/<slug:slug>/memories/<str:memory_id>/", views.memory_detail, name="memory"),
    path("n/<slug:slug>/memories/<str:memory_id>/edit/", views.memory_edit, name="memory_edit"),
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
        "n/<slug:slug>/subjects/<str:subject_id>/pause/", views.subject_pause, name="subject_pause"
    ),
    path(
        "n/<slug:slug>/subjects/<str:subject_id>/erase/", views.subject_remove, name="subject_erase"
    ),
]

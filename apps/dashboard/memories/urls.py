from django.urls import path

from apps.dashboard.memories import views

app_name = "memories"

urlpatterns = [
    path("memories/", views.namespace_pick, name="pick"),
    path("n/<slug:slug>/memories/", views.explorer, name="list"),
    path("n/<slug:slug>/memories/bulk/", views.bulk, name="bulk"),
    path("n/<slug:slug>/memories/purge/", views.purge, name="purge"),
    path("n/<slug:slug>/jobs/<str:job_id>/", views.job, name="job"),
    path("n/<slug:slug>/memories/<str:memory_id>/", views.memory_detail, name="detail"),
    path("n/<slug:slug>/memories/<str:memory_id>/edit/", views.memory_edit, name="edit"),
    path(
        "n/<slug:slug>/memories/<str:memory_id>/feedback/", views.memory_feedback, name="feedback"
    ),
    path("n/<slug:slug>/memories/<str:memory_id>/action/", views.memory_action, name="action"),
    path("n/<slug:slug>/memories/<str:memory_id>/delete/", views.memory_remove, name="delete"),
]

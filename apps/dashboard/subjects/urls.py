from django.urls import path

from apps.dashboard.subjects import views

app_name = "subjects"

urlpatterns = [
    path("n/<slug:slug>/subjects/", views.subjects, name="list"),
    path("n/<slug:slug>/subjects/<str:subject_id>/", views.subject_detail, name="detail"),
    path("n/<slug:slug>/subjects/<str:subject_id>/export/", views.subject_download, name="export"),
    path(
        "n/<slug:slug>/subjects/<str:subject_id>/portal-link/",
        views.subject_portal_link,
        name="portal_link",
    ),
    path("n/<slug:slug>/subjects/<str:subject_id>/pause/", views.subject_pause, name="pause"),
    path("n/<slug:slug>/subjects/<str:subject_id>/erase/", views.subject_remove, name="erase"),
]

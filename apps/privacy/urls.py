from django.urls import path

from apps.privacy import views

app_name = "privacy"

# Every page but the entry and the receipts names its subject; the portal session must be
# bound to it.
urlpatterns = [
    path("portal/enter/<str:token>", views.enter, name="enter"),
    # An erasure's receipt: no subject any more, only the code the person was shown.
    path("portal/receipts/<str:code>/", views.receipt, name="receipt"),
    path("portal/receipts/<str:code>/json/", views.receipt_json, name="receipt_json"),
    path("portal/<uuid:subject_id>/", views.overview, name="overview"),
    path("portal/<uuid:subject_id>/memories/", views.memories, name="memories"),
    path("portal/<uuid:subject_id>/memories/<str:memory_id>/", views.memory, name="memory"),
    path(
        "portal/<uuid:subject_id>/memories/<str:memory_id>/correct/",
        views.correct,
        name="correct",
    ),
    path(
        "portal/<uuid:subject_id>/memories/<str:memory_id>/confirm/",
        views.confirm,
        name="confirm",
    ),
    path("portal/<uuid:subject_id>/memories/<str:memory_id>/delete/", views.delete, name="delete"),
    path("portal/<uuid:subject_id>/forget/", views.forget, name="forget"),
    path("portal/<uuid:subject_id>/export/", views.export, name="export"),
    path("portal/<uuid:subject_id>/export/json/", views.export_json, name="export_json"),
    path("portal/<uuid:subject_id>/export/print/", views.export_print, name="export_print"),
    path("portal/<uuid:subject_id>/erase/", views.erase, name="erase"),
    path("portal/<uuid:subject_id>/erase/cancel/", views.erase_cancel, name="erase_cancel"),
    path("portal/<uuid:subject_id>/pause/", views.pause, name="pause"),
    path("portal/<uuid:subject_id>/activity/", views.activity, name="activity"),
    path("portal/<uuid:subject_id>/blocked/", views.blocked, name="blocked"),
    path("portal/<uuid:subject_id>/language/", views.language, name="language"),
    path("portal/<uuid:subject_id>/leave/", views.leave, name="leave"),
]

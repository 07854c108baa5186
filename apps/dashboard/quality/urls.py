from django.urls import path

from apps.dashboard.quality import views

app_name = "quality"

urlpatterns = [
    path("quality/", views.quality_pick, name="pick"),
    path("n/<slug:slug>/quality/", views.overview, name="overview"),
    path("n/<slug:slug>/quality/import/", views.set_import, name="set_import"),
    path("n/<slug:slug>/quality/from-feedback/", views.set_from_feedback, name="set_from_feedback"),
    path("n/<slug:slug>/quality/sets/new/", views.set_create, name="set_create"),
    path("n/<slug:slug>/quality/sets/<uuid:set_id>/", views.set_detail, name="set"),
    path("n/<slug:slug>/quality/sets/<uuid:set_id>/delete/", views.set_delete, name="set_delete"),
    path(
        "n/<slug:slug>/quality/cases/<uuid:case_id>/delete/", views.case_delete, name="case_delete"
    ),
    path(
        "n/<slug:slug>/quality/recalls/<uuid:recall_id>/case/",
        views.case_from_recall,
        name="case_from_recall",
    ),
    path("n/<slug:slug>/quality/runs/<uuid:run_id>/", views.run_detail, name="run"),
    path(
        "n/<slug:slug>/quality/runs/<uuid:run_id>/cases/<uuid:case_id>/",
        views.case_result,
        name="case",
    ),
    path("n/<slug:slug>/quality/compare/", views.compare, name="compare"),
    path("n/<slug:slug>/quality/variants/", views.variant_save, name="variant_save"),
    path(
        "n/<slug:slug>/quality/variants/<uuid:variant_id>/promote/",
        views.variant_promote,
        name="variant_promote",
    ),
    path(
        "n/<slug:slug>/quality/variants/<uuid:variant_id>/delete/",
        views.variant_delete,
        name="variant_delete",
    ),
]

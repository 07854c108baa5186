from django.urls import path

from apps.dashboard.review import views

app_name = "review"

urlpatterns = [
    path("n/<slug:slug>/review/", views.review, name="queue"),
    path("n/<slug:slug>/review/merge/", views.review_merge, name="merge"),
]

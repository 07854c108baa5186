from django.urls import path

from apps.dashboard.members import views

app_name = "members"

urlpatterns = [
    path("n/<slug:slug>/members/", views.members, name="list"),
    path("n/<slug:slug>/members/change/", views.member_change, name="change"),
]

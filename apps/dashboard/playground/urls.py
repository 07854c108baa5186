from django.urls import path

from apps.dashboard.playground import views

app_name = "playground"

urlpatterns = [
    path("playground/", views.playground, name="index"),
    path("playground/feedback/", views.playground_feedback, name="feedback"),
]

from django.urls import path

from apps.context import views

app_name = "context"

urlpatterns = [
    path("playground/", views.playground, name="playground"),
    path("playground/feedback/", views.playground_feedback, name="playground_feedback"),
]

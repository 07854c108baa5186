"""URLs mounted only by the error-shape tests: tiny views that fail in each way."""

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub.exceptions import ApplicationError


class EchoSerializer(serializers.Serializer):
    count = serializers.IntegerField(min_value=0)


class EchoView(APIView):
    permission_classes = [AllowAny]

    def post(self, request: Request) -> Response:
        serializer = EchoSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if serializer.validated_data["count"] == 13:
            raise ApplicationError(
                "Unlucky.", code="unlucky", details={"count": 13}, status_code=409
            )
        return Response(serializer.validated_data)


class BrokenView(APIView):
    permission_classes = [AllowAny]

    def get(self, request: Request) -> Response:
        raise RuntimeError("a bug")


def broken_page(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug")


class DatabaseDownView(APIView):
    permission_classes = [AllowAny]

    def get(self, request: Request) -> Response:
        raise OperationalError("connection to server on socket /secret/path failed")


def database_down_page(request: HttpRequest) -> HttpResponse:
    raise InterfaceError("connection already closed")


urlpatterns = [
    path("api/test/echo", EchoView.as_view()),
    path("api/test/broken", BrokenView.as_view()),
    path("broken-page/", broken_page),
    path("api/test/database-down", DatabaseDownView.as_view()),
    path("database-down-page/", database_down_page),
    path("", include("memoryhub.urls")),
]

handler404 = "memoryhub.views.page_not_found"
handler500 = "memoryhub.views.server_error"


# The data key a failing view held, for the test to look for in the debug page.
LEAKY_DATA_KEY = bytes(range(32))


def leaky_page(request: HttpRequest) -> HttpResponse:
    """Fails with the keyring, a data key and secrets in its local variables and message."""
    from django.conf import settings

    keyring = settings.MEMORYHUB_KEYRING
    data_key = LEAKY_DATA_KEY
    kek_text = settings.MEMORYHUB_KEK
    raise RuntimeError(f"could not unwrap with {kek_text} ({len(keyring)}, {len(data_key)})")


urlpatterns.insert(0, path("leaky-page/", leaky_page))

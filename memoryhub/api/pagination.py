from typing import Any

from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination


class NewestFirstCursorPagination(CursorPagination):
    """`results` + `next`/`previous` cursors; stable under concurrent inserts."""

    def decode_cursor(self, request: Any) -> Any:
        try:
            return super().decode_cursor(request)
        except NotFound:  # DRF says 404; a malformed parameter is a 400 naming it
            raise ValidationError({self.cursor_query_param: ["Invalid cursor."]}) from None

    ordering: tuple[str, ...] = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class NewestIdFirstCursorPagination(NewestFirstCursorPagination):
    ordering = ("-id",)

    def decode_cursor(self, request: Any) -> Any:
        cursor = super().decode_cursor(request)
        # A well-encoded cursor can still carry any position: here it must be an id.
        if cursor is not None and cursor.position is not None and not cursor.position.isdigit():
            raise ValidationError({self.cursor_query_param: ["Invalid cursor."]})
        return cursor

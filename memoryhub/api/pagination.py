from rest_framework.pagination import CursorPagination


class NewestFirstCursorPagination(CursorPagination):
    """`results` + `next`/`previous` cursors; stable under concurrent inserts."""

    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class NewestIdFirstCursorPagination(NewestFirstCursorPagination):
    ordering = ("-id",)

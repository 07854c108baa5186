VERSION = "0.1.0"
USER_AGENT = f"memoryhub-client/{VERSION}"

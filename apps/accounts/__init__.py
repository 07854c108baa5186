"""Dashboard logins and API keys (hashed, scoped to namespaces and permissions), the API's
authentication, throttle and base view (`api.base.NamespacedAPIView`) every app's API stands
on, and the audit log's endpoint. Above namespaces and the audit log. The sign-in and
API-keys pages are apps/dashboard's."""

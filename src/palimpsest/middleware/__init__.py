"""The ASGI middlewares, one module each, in the order a request meets them (``app.py``):
request timing, the access log, authentication (``auth``), the per-principal rate limit and
the tokenless one (``ratelimit``), the sealed bookmarks (``bookmarks``), admission control
(``admission``)."""

"""HEAD answered wherever GET is, as HTTP asks (RFC 9110, 9.3.2): load balancers, uptime monitors and
`curl -I` probe with it, and FastAPI routes only the methods a route names (HEAD on /v1/models was 405)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGetMiddleware:
    """Serve a HEAD request as the GET it stands for, with the GET answer's status and headers and no body."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, without_body)

"""A body read ahead (to check its size or shape) handed to the app as if unread."""

from __future__ import annotations

from starlette.types import Message, Receive


def replay(body: bytes, receive: Receive) -> Receive:
    """A receive channel that hands out the already-read body, then the real channel."""
    sent = False

    async def next_message() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return next_message

"""Is a TCP port free to listen on? Asked before anything starts, so a clash is named up front."""

from __future__ import annotations

import socket

from palimpsest.errors import Unavailable


def port_taken(host: str, port: int) -> bool:
    """True when something already listens on ``host:port`` (or it cannot be bound at all).

    Binding tells the truth where connecting does not (a listener on another address of the
    same port still blocks us). SO_REUSEADDR, as servers set it, keeps a socket that is merely
    in TIME_WAIT from counting as taken.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def require_free(host: str, ports: dict[int, str]) -> None:
    """Refuse with one message naming every taken port and the setting that moves it."""
    taken = [(port, setting) for port, setting in ports.items() if port_taken(host, port)]
    if taken:
        listed = ", ".join(f"{port} ({setting})" for port, setting in taken)
        raise Unavailable(
            f"port{'s' if len(taken) > 1 else ''} {listed} on {host} "
            f"{'are' if len(taken) > 1 else 'is'} taken by another process: stop it, or set "
            "the named setting to a free port"
        )

"""The server's own keys: what every replica shares to seal values that clients carry back.

One secret (``PALIMPSEST_SERVER_SECRET``, else the token secret, else the development
secret) and one derived key per purpose (HKDF-SHA256), so a key leaked or rotated for one
purpose says nothing about another.
"""

from __future__ import annotations

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from palimpsest.config import Settings
from palimpsest.identity.tokens import dev_secret

KEY_BYTES = 32


def server_key(settings: Settings, purpose: str) -> bytes:
    """The 32-byte key for ``purpose`` (for example ``"bookmark"``)."""
    if settings.auth.server_secret is not None:
        material = settings.auth.server_secret.get_secret_value().encode()
    elif settings.auth.secret is not None:
        material = settings.auth.secret.get_secret_value().encode()
    else:
        material = dev_secret(settings)
    info = f"palimpsest/{purpose}/v1".encode()
    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=info).derive(material)

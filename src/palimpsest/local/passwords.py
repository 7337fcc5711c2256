"""Generated passwords for the managed servers.

Letters and digits only: a generated secret reaches the Neo4j admin command's argument list
and PostgreSQL's password file, and one that began with ``-`` was read as an option. Nor does
it need quoting in a configuration file or a connection string.
"""

from __future__ import annotations

import secrets
import string

ALPHABET = string.ascii_letters + string.digits
LENGTH = 32  # log2(62) * 32: about 190 bits


def generated_password() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))

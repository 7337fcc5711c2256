"""The installed `palimpsest` command: --version, and one line (no traceback) per expected
failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import palimpsest

COMMAND = Path(sys.executable).parent / "palimpsest"


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    return subprocess.run(
        [str(COMMAND), *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=120,
        check=False,
    )


def test_version_prints_the_package_version() -> None:
    done = run("--version")
    assert done.returncode == 0
    # The distributions take their version from it (pyproject.toml, [tool.hatch.version]).
    assert done.stdout.strip() == f"palimpsest {palimpsest.__version__}"


def one_line_failure(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("palimpsest: ")
    return lines[0]


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"PALIMPSEST_TOKEN_SECRET": "short"}, "PALIMPSEST_TOKEN_SECRET must be at least 32"),
        ({"PALIMPSEST_PORT": "eighty"}, "PALIMPSEST_PORT"),
        ({"PALIMPSEST_MAX_TOKEN_BYTES": "1"}, "PALIMPSEST_MAX_TOKEN_BYTES"),
        ({"PALIMPSEST_EXTRACTORS": "mentions,model"}, "PALIMPSEST_MODEL_URL must be set"),
    ],
)
def test_bad_settings_are_one_line(tmp_path: Path, env: dict[str, str], says: str) -> None:
    line = one_line_failure(
        run("token", "mint", "--tenant", "t", PALIMPSEST_HOME=str(tmp_path), **env)
    )
    assert says in line


def test_a_refused_command_is_one_line(tmp_path: Path) -> None:
    pem = (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    key = tmp_path / "public.pem"
    key.write_bytes(pem)
    done = run(
        "token",
        "mint",
        "--tenant",
        "t",
        PALIMPSEST_HOME=str(tmp_path),
        PALIMPSEST_TOKEN_PUBLIC_KEY_FILE=str(key),
    )
    assert "only holds a public key" in one_line_failure(done)


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    done = run(
        "token",
        "mint",
        "--tenant",
        "t",
        PALIMPSEST_HOME=str(tmp_path),
        PALIMPSEST_TOKEN_PUBLIC_KEY_FILE=str(tmp_path / "absent.pem"),
    )
    assert "absent.pem" in one_line_failure(done)


def test_a_minted_token_lives_as_long_as_asked_up_to_90_days(tmp_path: Path) -> None:
    days_90 = 90 * 24 * 3600
    done = run(
        "token", "mint", "--tenant", "t", "--ttl", str(days_90), PALIMPSEST_HOME=str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    claims = jwt.decode(done.stdout.strip(), options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == days_90
    longer = run(
        "token", "mint", "--tenant", "t", "--ttl", str(days_90 + 1), PALIMPSEST_HOME=str(tmp_path)
    )
    assert longer.returncode == 2  # a usage error, as for --ttl 0
    assert "--ttl" in longer.stderr
    assert longer.stdout == ""

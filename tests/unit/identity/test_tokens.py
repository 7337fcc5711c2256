from __future__ import annotations

import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from palimpsest.config import Settings
from palimpsest.errors import Unauthenticated
from palimpsest.identity import Role, Scope
from palimpsest.identity.tokens import TokenKeys, VerifiedTokens, load_keys, mint, verify

SECRET = b"s" * 32


def hs_keys() -> TokenKeys:
    return TokenKeys("HS256", SECRET, SECRET, "palimpsest", "palimpsest", 0)


def test_round_trip_builds_the_principal() -> None:
    token = mint(
        hs_keys(),
        tenant="acme",
        user="alice",
        agent="planner",
        roles={Role.ADMIN},
        memory_scopes=[Scope.USER, Scope.GLOBAL],
        isolated=False,
    )
    p = verify(hs_keys(), token)
    assert (p.tenant_id, p.user_id, p.agent_name) == ("acme", "alice", "planner")
    assert p.is_admin
    assert not p.is_operator
    assert p.memory_scopes == frozenset({Scope.USER, Scope.GLOBAL})
    assert p.sql_scopes is None


def test_the_operator_role_round_trips() -> None:
    token = mint(hs_keys(), tenant="acme", roles={Role.OPERATOR})
    p = verify(hs_keys(), token)
    assert p.is_operator
    assert not p.is_admin
    assert p.roles == {Role.OPERATOR}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"exp": 1}, "expired"),
        ({"aud": "other"}, "audience"),
        ({"iss": "other"}, "issuer"),
        ({"roles": ["root"]}, "unknown"),
        ({"memory_scopes": ["PLANET"]}, "unknown"),
        ({"tenant": ""}, "tenant"),
        ({"isolated": "yes"}, "boolean"),
        # NumericDate claims must be numbers; PyJWT alone takes numeric strings.
        # far ahead: the parameters are made at collection, and a long suite must not expire it
        ({"exp": str(int(time.time()) + 365 * 86400)}, "'exp' must be a number"),
        ({"iat": str(int(time.time()))}, "'iat' must be a number"),
        ({"nbf": str(int(time.time()) - 10)}, "'nbf' must be a number"),
        ({"exp": True}, "exp"),
        # The user claim is held to the rule an admin naming a user is (identity.names).
        ({"user": "ev1\x00"}, "'user' must not hold control"),
        ({"user": "ev\u200b1"}, "'user' must not hold control"),
        ({"user": " ev1"}, "'user' must not start or end"),
    ],
)
def test_bad_claims_are_refused(change: dict[str, object], reason: str) -> None:
    now = int(time.time())
    claims = {
        "iss": "palimpsest",
        "aud": "palimpsest",
        "iat": now,
        "exp": now + 60,
        "tenant": "acme",
        **change,
    }
    with pytest.raises(Unauthenticated, match=reason):
        verify(hs_keys(), jwt.encode(claims, SECRET, algorithm="HS256"))


def test_wrong_key_unsigned_and_junk_are_refused() -> None:
    token = mint(
        TokenKeys("HS256", b"o" * 32, b"o" * 32, "palimpsest", "palimpsest", 0), tenant="acme"
    )
    with pytest.raises(Unauthenticated, match="signature"):
        verify(hs_keys(), token)
    unsigned = jwt.encode({"tenant": "acme"}, None, algorithm="none")  # type: ignore[arg-type]
    for bad in (unsigned, "junk", ""):
        with pytest.raises(Unauthenticated):
            verify(hs_keys(), bad)


def test_eddsa_public_key_verifies(tmp_path: Path) -> None:
    private = Ed25519PrivateKey.generate()
    pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (tmp_path / "pub.pem").write_bytes(pem)
    keys = load_keys(Settings(home=tmp_path, token_public_key_file=tmp_path / "pub.pem"))
    now = int(time.time())
    claims = {
        "iss": "palimpsest",
        "aud": "palimpsest",
        "iat": now,
        "exp": now + 60,
        "tenant": "acme",
        "user": "u",
    }
    token = jwt.encode(claims, private, algorithm="EdDSA")
    assert verify(keys, token).user_id == "u"
    with pytest.raises(Unauthenticated):
        mint(keys, tenant="acme")  # a public key cannot sign


def test_dev_secret_is_generated_once_and_short_secrets_refused(tmp_path: Path) -> None:
    first = load_keys(Settings(home=tmp_path))
    second = load_keys(Settings(home=tmp_path))
    assert first.sign_key == second.sign_key
    assert (tmp_path / "dev-token-secret").stat().st_mode & 0o777 == 0o600
    with pytest.raises(ValueError, match="32 bytes"):
        Settings(token_secret="short")


def test_oversized_tokens_are_refused_before_decoding() -> None:
    keys = hs_keys()
    padded = mint(keys, tenant="acme", model="m" * 200)
    assert len(padded) < keys.max_token_bytes
    assert verify(keys, padded).model == "m" * 200
    # A validly signed token over the cap is still refused: the size check comes first.
    big = jwt.encode(
        {
            "iss": "palimpsest",
            "aud": "palimpsest",
            "iat": int(time.time()),
            "exp": int(time.time()) + 60,
            "tenant": "acme",
            "padding": "p" * keys.max_token_bytes,
        },
        SECRET,
        algorithm="HS256",
    )
    with pytest.raises(Unauthenticated, match=f"longer than {keys.max_token_bytes} bytes"):
        verify(keys, big)


def test_the_token_size_cap_is_a_setting(tmp_path: Path) -> None:
    keys = load_keys(Settings(home=tmp_path, max_token_bytes=1024))
    assert keys.max_token_bytes == 1024


def test_the_cli_mints_operator_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from palimpsest.cli import app

    monkeypatch.setenv("PALIMPSEST_HOME", str(tmp_path))
    monkeypatch.delenv("PALIMPSEST_TOKEN_SECRET", raising=False)
    monkeypatch.delenv("PALIMPSEST_TOKEN_PUBLIC_KEY_FILE", raising=False)
    runner = CliRunner()
    keys = load_keys(Settings(home=tmp_path))
    out = runner.invoke(app, ["token", "mint", "--tenant", "acme", "--operator"])
    assert out.exit_code == 0, out.output
    p = verify(keys, out.stdout.strip())
    assert (p.roles, p.agent_name, p.origin.value) == (frozenset({Role.OPERATOR}), None, "operator")
    out = runner.invoke(app, ["token", "mint", "--tenant", "acme", "--admin"])
    assert verify(keys, out.stdout.strip()).roles == {Role.ADMIN}


def test_no_claim_makes_a_bulk_import_principal() -> None:
    keys = hs_keys()
    claims = {"tenant": "acme", "bulk_import": True, "origin": "import"}
    assert keys.sign_key is not None
    token = jwt.encode(
        {
            "iss": keys.issuer,
            "aud": keys.audience,
            "iat": int(time.time()),
            "exp": int(time.time()) + 60,
            **claims,
        },
        keys.sign_key,
        algorithm=keys.algorithm,
    )
    p = verify(keys, token)
    assert p.bulk_import is False
    assert p.origin.value == "agent"


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def test_a_verified_token_is_remembered_until_it_expires() -> None:
    clock = Clock()
    keys = TokenKeys("HS256", SECRET, SECRET, "palimpsest", "palimpsest", 5)
    tokens = VerifiedTokens(keys, clock=clock)
    token = mint(keys, tenant="acme", user="alice", ttl_seconds=60)
    first = tokens.verify(token)
    assert tokens.verify(token) is first  # remembered: no second signature check
    clock.now += 60 + 4  # within the leeway, as jwt.decode would judge it
    assert tokens.verify(token) is first
    clock.now += 1  # past it: verified afresh (by jwt.decode, on the real clock)
    again = tokens.verify(token)
    assert again is not first
    assert again == first


def test_only_the_exact_token_text_is_remembered() -> None:
    keys = hs_keys()
    tokens = VerifiedTokens(keys)
    token = mint(keys, tenant="acme")
    tokens.verify(token)
    head, _, signature = token.split(".")
    forged = mint(keys, tenant="evil").split(".")[1]
    for bad in (f"{head}.{forged}.{signature}", token + "x", token[:-1]):
        with pytest.raises(Unauthenticated):
            tokens.verify(bad)


def test_the_memory_is_bounded() -> None:
    keys = hs_keys()
    tokens = VerifiedTokens(keys, size=2)
    minted = [mint(keys, tenant=f"t{i}") for i in range(3)]
    principals = [tokens.verify(t) for t in minted]
    assert tokens.verify(minted[2]) is principals[2]
    assert tokens.verify(minted[0]) is not principals[0]  # the oldest was let go

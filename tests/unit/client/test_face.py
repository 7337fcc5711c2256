"""``palimpsest.client``'s face: every name in ``__all__`` imports, as the object of the module
it lives in, and only when first used (``Client`` alone loads no inputs and no asyncio
flavour)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import palimpsest.client as face
from palimpsest.client import aio, enums, inputs, operations, sync, transport


def test_every_public_name_is_its_modules_own() -> None:
    homes = {"aio": aio, "enums": enums, "inputs": inputs, "sync": sync, "transport": transport}
    for name in face.__all__:
        if name == "operations":
            assert face.operations is operations
            continue
        assert any(vars(m).get(name) is getattr(face, name) for m in homes.values()), name
    assert set(dir(face)) >= set(face.__all__)


def test_a_name_outside_the_face_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="Transport"):
        face.Transport  # noqa: B018


def test_the_blocking_client_alone_loads_neither_inputs_nor_the_asyncio_flavour() -> None:
    probe = "import sys; from palimpsest.client import Client; print(sorted(sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "'palimpsest.client.sync'" in done.stdout
    assert "'palimpsest.client.inputs'" not in done.stdout
    assert "'palimpsest.client.aio'" not in done.stdout

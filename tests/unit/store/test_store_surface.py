"""The public surface of riverbeam.store, its migrations, and its module sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

import riverbeam.store as store
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.store import load_migrations
from riverbeam.store._migrations import quote_schema


def test_all_is_public_and_importable() -> None:
    assert len(set(store.__all__)) == len(store.__all__)
    for name in store.__all__:
        assert not name.startswith("_")
        assert getattr(store, name) is not None


def test_implementations_satisfy_the_protocols() -> None:
    from riverbeam.agents._io import MemoryWriter

    for cls in (store.InMemoryStore, store.PgBeamStore, store.StoreClient):
        for method in [m for m in dir(store.BeamStore) if not m.startswith("_")]:
            assert callable(getattr(cls, method)), (cls, method)
        assert callable(cls.remember)
    assert MemoryWriter is not None


def test_migrations_are_numbered_without_gaps() -> None:
    migrations = load_migrations()
    assert [m.version for m in migrations] == list(range(1, len(migrations) + 1))
    assert migrations[0].name == "init"
    assert all(len(m.checksum) == 64 for m in migrations)
    assert load_migrations()[0].checksum == migrations[0].checksum


def test_schema_names_are_quoted_identifiers() -> None:
    assert quote_schema("ref_beam") == '"ref_beam"'
    with pytest.raises(RiverbeamError) as info:
        quote_schema('a"b')
    assert info.value.code is ErrorCode.INVALID_ARGUMENT


def test_modules_stay_small() -> None:
    root = Path(store.__file__).parent
    sizes = {p.name: len(p.read_text().splitlines()) for p in root.glob("*.py")}
    assert max(sizes.values()) < 600, sizes

"""Database fixtures shared by the store tests (imported by tests/test_store.py and tests/test_resume.py).

PostgreSQL comes from ``STRUCTCRAWL_TEST_POSTGRES_URL`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``); every test gets a
schema of its own (``search_path`` in the URL), dropped afterwards.  An
unreachable server FAILS the PostgreSQL tests: it is never a skip.
"""

from __future__ import annotations

import os
import uuid

import pytest
import sqlalchemy as sa

PG_URL = os.environ.get("STRUCTCRAWL_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
BACKENDS = ["sqlite", "postgresql"]


def _with_search_path(url: str, schema: str) -> str:
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


class PgSchema:
    """A throw-away PostgreSQL schema; ``url`` points the store at it."""

    def __init__(self) -> None:
        self.name = "sct_" + uuid.uuid4().hex[:12]
        self.admin = sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://", 1))
        try:
            with self.admin.begin() as conn:
                conn.exec_driver_sql(f"CREATE SCHEMA {self.name}")
        except sa.exc.OperationalError as exc:
            self.admin.dispose()
            pytest.fail(f"PostgreSQL at {PG_URL} is unreachable (set STRUCTCRAWL_TEST_POSTGRES_URL): "
                        f"{str(exc.orig).strip().splitlines()[0]}")
        self.url = _with_search_path(PG_URL, self.name)

    def drop(self) -> None:
        with self.admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {self.name} CASCADE")
        self.admin.dispose()


@pytest.fixture
def pg_url():
    schema = PgSchema()
    yield schema.url
    schema.drop()


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path):
    """A fresh, empty store URL: a SQLite file in tmp_path, or a PostgreSQL schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'crawl.db'}"
        return
    schema = PgSchema()
    yield schema.url
    schema.drop()

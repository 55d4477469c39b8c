"""`webpages.host`: the URL's authority as a stored generated column, one expression per dialect.

The authority is what `urlsplit(url).netloc` returns (userinfo and port included); a URL
without one stores NULL, so it falls outside every config scope, as in Python. PostgreSQL
extracts it with an anchored regex; SQLite, which has no regex, with `instr`/`substr`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement, FunctionElement
from sqlalchemy.types import Text

_PG = "NULLIF(substring({url} from '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)'), '')"


def _sqlite(url: str) -> str:
    rest = f"substr({url}, instr({url}, '://') + 3)"

    def first(char: str) -> str:
        return f"CASE instr({rest}, '{char}') WHEN 0 THEN length({rest}) + 1 ELSE instr({rest}, '{char}') END"

    scheme = f"substr({url}, 1, instr({url}, '://') - 1)"
    return (
        f"CASE WHEN instr({url}, '://') > 1 AND {scheme} GLOB '[A-Za-z]*' "
        f"AND {scheme} NOT GLOB '*[^A-Za-z0-9+.-]*' "
        f"THEN NULLIF(substr({rest}, 1, min({first('/')}, {first('?')}, {first('#')}) - 1), '') "
        "END"
    )


class url_authority(FunctionElement[str]):
    type = Text()
    inherit_cache = True
    name = "url_authority"


@compiles(url_authority, "postgresql")
def _compile_pg(element: url_authority, compiler: Any, **kw: Any) -> str:
    return _PG.format(url=_column(element, compiler, **kw))


@compiles(url_authority)
def _compile_default(element: url_authority, compiler: Any, **kw: Any) -> str:
    return _sqlite(_column(element, compiler, **kw))


def _column(element: url_authority, compiler: Any, **kw: Any) -> str:
    (argument,) = element.clauses.clauses
    # A generated column names its sibling bare: no table prefix inside the DDL.
    name = getattr(argument, "name", None)
    return name if isinstance(name, str) else compiler.process(argument, **kw)


def authority_of(url_column: ColumnElement[Any] | Any) -> url_authority:
    return url_authority(url_column)

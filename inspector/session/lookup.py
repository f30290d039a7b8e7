"""Finding a provider or extension by the names people use.

A provider is named by its package, its provider_id (known once negotiated; defaults to
the package, §3.1) or its authority; an extension by its extension id or its package.
Exact matches win; otherwise a unique case-insensitive match or a unique suffix of the
package (`pricealerts` for `com.example.pricealerts`) is accepted. Anything else is a
clear "not found" or "ambiguous" error listing the candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from inspector.session.errors import AmbiguousError, NotFoundError

T = TypeVar("T")


def find_one(
    items: Sequence[T],
    name: str,
    keys: Callable[[T], list[str]],
    label: Callable[[T], str],
    what: str,
) -> T:
    """Match `name` against each item's keys: exact, then case-insensitive, then suffix."""
    if not name:
        raise NotFoundError(what, name, [label(i) for i in items])

    def unique(matches: list[T]) -> T | None:
        distinct: list[T] = []
        for m in matches:
            if not any(m is d for d in distinct):
                distinct.append(m)
        if len(distinct) == 1:
            return distinct[0]
        if len(distinct) > 1:
            raise AmbiguousError(what, name, sorted(label(d) for d in distinct))
        return None

    exact = [i for i in items if name in keys(i)]
    hit = unique(exact)
    if hit is not None:
        return hit
    lowered = name.lower()
    folded = [i for i in items if lowered in (k.lower() for k in keys(i))]
    hit = unique(folded)
    if hit is not None:
        return hit
    suffix = [i for i in items if any(k.lower().endswith("." + lowered) for k in keys(i))]
    hit = unique(suffix)
    if hit is not None:
        return hit
    raise NotFoundError(what, name, sorted(label(i) for i in items))

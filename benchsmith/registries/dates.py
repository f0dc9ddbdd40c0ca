"""Registry timestamps, checked and written one way (``YYYY-MM-DDTHH:MM:SSZ``, UTC)."""

from __future__ import annotations

import datetime as _dt


def iso_utc(value: object) -> str | None:
    """An untrusted timestamp as ISO-8601 UTC; None when it is not one (or lies outside 1990-2100)."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    when = when.astimezone(_dt.timezone.utc)
    if not 1990 <= when.year <= 2100:
        return None
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def date_of(value: str | None) -> _dt.date | None:
    return _dt.datetime.fromisoformat(value.replace("Z", "+00:00")).date() if value else None

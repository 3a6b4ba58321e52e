"""Protocol versions and negotiation.

Compatibility rules (docs/PROTOCOL.md, "Versions"): readers ignore unknown fields; adding
an optional field, a new event type, a new error code or a new command the server may
refuse is a *minor* change within a version; anything else (removing or renaming a field,
changing a type or meaning, making a field required) needs a new major version number.
"""

from __future__ import annotations

from collections.abc import Iterable

PROTOCOL_VERSION = 1
SUPPORTED_VERSIONS: tuple[int, ...] = (1,)


def negotiate(offered: Iterable[int], supported: Iterable[int] = SUPPORTED_VERSIONS) -> int | None:
    """The highest version both sides speak, or None (then: ``unsupported_version``)."""
    common = set(offered) & set(supported)
    return max(common) if common else None

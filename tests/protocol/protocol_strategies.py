"""Hypothesis strategies for every protocol struct, derived from msgspec's type info.

Deriving them from ``msgspec.inspect`` means a new message or a new constraint is covered
by the round-trip and fuzz tests without anyone writing a strategy for it.
"""

from __future__ import annotations

from typing import Any

import msgspec
import msgspec.inspect as mi
from hypothesis import strategies as st

import protocol
from protocol.fields import HEX_PATTERN

# Letters, digits and spaces inside: already clean, so clean_text() leaves them unchanged
# and a round trip compares equal.
_TEXT_ALPHABET = st.characters(categories=["L", "N"])

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _text(t: mi.StrType) -> st.SearchStrategy[str]:
    if t.pattern == protocol.CARD_PATTERN:
        return st.sampled_from(protocol.CARD_CODES)
    lo = t.min_length or 0
    if t.pattern == HEX_PATTERN:        # contributions, commitments, chat senders (R8a)
        hi = t.max_length if t.max_length is not None else 64
        return st.text("0123456789abcdef", min_size=max(lo, 1), max_size=hi)
    assert t.pattern is None, f"no strategy for pattern {t.pattern}"
    hi = min(t.max_length if t.max_length is not None else 12, 12)
    return st.text(_TEXT_ALPHABET, min_size=lo, max_size=max(lo, hi))


def for_type(t: mi.Type) -> st.SearchStrategy[Any]:
    """A strategy producing valid values of msgspec type ``t``."""
    if isinstance(t, mi.Metadata):
        return for_type(t.type)
    if isinstance(t, mi.IntType):
        lo = t.ge if t.ge is not None else -(2**53)
        hi = t.le if t.le is not None else 2**53
        return st.integers(lo, hi)
    if isinstance(t, mi.FloatType):
        return st.floats(
            min_value=t.ge if t.ge is not None else -1e9,
            max_value=t.le if t.le is not None else 1e9,
            allow_nan=False,
        )
    if isinstance(t, mi.BoolType):
        return st.booleans()
    if isinstance(t, mi.NoneType):
        return st.none()
    if isinstance(t, mi.StrType):
        return _text(t)
    if isinstance(t, mi.LiteralType):
        return st.sampled_from(t.values)
    if isinstance(t, mi.EnumType):
        return st.sampled_from(list(t.cls))
    if isinstance(t, mi.UnionType):
        return st.one_of([for_type(x) for x in t.types])
    if isinstance(t, mi.ListType):
        lo = t.min_length or 0
        hi = min(t.max_length if t.max_length is not None else 3, 4)
        return st.lists(for_type(t.item_type), min_size=lo, max_size=max(lo, hi))
    if isinstance(t, mi.TupleType):
        return st.tuples(*[for_type(x) for x in t.item_types])
    if isinstance(t, mi.DictType):
        return st.dictionaries(st.text(max_size=6), json_values, max_size=3)
    if isinstance(t, mi.AnyType):
        return json_values
    if isinstance(t, mi.StructType):
        return for_struct(t.cls)
    raise NotImplementedError(t)


def _build(cls: type[msgspec.Struct], kwargs: dict[str, Any]) -> msgspec.Struct | None:
    try:
        return cls(**kwargs)
    except ValueError:  # a cross-field rule (__post_init__), e.g. R15 `n` only for aces
        return None


def for_struct(cls: type[Any]) -> st.SearchStrategy[Any]:
    """Valid instances of a protocol struct (cross-field rules respected)."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    fields = {f.name: for_type(f.type) for f in info.fields}
    return (
        st.fixed_dictionaries(fields)
        .map(lambda kw: _build(cls, kw))
        .filter(lambda obj: obj is not None)
    )


CLIENT_CLASSES = list(protocol.CLIENT_TYPES.values())
SERVER_CLASSES = list(protocol.SERVER_TYPES.values())
EVENT_CLASSES = list(protocol.EVENT_TYPES.values())

client_commands = st.one_of([for_struct(c) for c in CLIENT_CLASSES])
server_messages = st.one_of([for_struct(c) for c in SERVER_CLASSES])

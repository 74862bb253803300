"""A cheaper ``dataclasses.replace`` for the frozen dataclasses the loop copies on every turn.

``dataclasses.replace`` checks the names, collects every field's value in Python and runs the
generated ``__init__``, which sets each field through ``object.__setattr__`` (frozen): several
microseconds for the loop's state, copied two or three times per tool turn, and for each tool
call's context. For a dataclass whose fields are all plain ``__init__`` fields and which has no
``__post_init__`` and no slots, a copy of the instance's ``__dict__`` with the changed fields is
the same value (``tests/unit/agent/test_frozen.py`` holds the classes this is used on to that).
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def evolve(obj: T, /, **changes: Any) -> T:
    """``dataclasses.replace(obj, **changes)`` for such a dataclass instance (module docstring):
    a new object with the same fields but ``changes``. Raises ``AssertionError`` for a name that
    is not a field."""
    cls = type(obj)
    assert changes.keys() <= cls.__dataclass_fields__.keys()  # type: ignore[attr-defined]
    new: T = object.__new__(cls)
    new.__dict__.update(obj.__dict__, **changes)
    return new

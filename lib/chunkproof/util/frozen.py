"""A quicker ``__init__`` for the frozen dataclasses made by the hundred thousand (blocks,
chunks): the same signature and the same values, each slot set through its own descriptor; and
``dataclasses.replace`` of such a record without looking its fields up for every copy.

A frozen dataclass's generated ``__init__`` sets each field with ``object.__setattr__``, looked
up again for every field; a document makes a block per paragraph and a chunk per few hundred
chars, so that lookup was a tenth of chunking. ``tests/test_frozen.py`` holds the records made
both ways equal."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def quick_init(cls: type[T]) -> type[T]:
    """Class decorator (above ``@dataclass(frozen=True, slots=True)``): replaces ``__init__``
    with one generated as dataclasses generates its own, each field's default kept, that sets
    the slots directly. A class it cannot serve the same way is refused."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"quick_init needs a frozen dataclass with slots, not {cls.__name__}")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"quick_init cannot call {cls.__name__}.__post_init__")
    namespace: dict[str, Any] = {}
    signature, body = [], []
    for n, field in enumerate(dataclasses.fields(cls)):  # type: ignore[arg-type]
        if not field.init or field.default_factory is not dataclasses.MISSING:
            raise TypeError(f"quick_init keeps only plain defaults: {cls.__name__}.{field.name}")
        namespace[f"_set{n}"] = cls.__dict__[field.name].__set__
        if field.default is dataclasses.MISSING:
            signature.append(field.name)
        else:
            namespace[f"_default{n}"] = field.default
            signature.append(f"{field.name}=_default{n}")
        body.append(f"    _set{n}(self, {field.name})\n")
    source = f"def __init__(self, {', '.join(signature)}):\n{''.join(body)}"
    exec(source, namespace)  # noqa: S102 (made of the class's own field names)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    cls.__quick_fields__ = names  # type: ignore[attr-defined]  # what quick_replace copies
    return cls


def quick_replace(record: T, /, **changes: Any) -> T:
    """``dataclasses.replace`` of a ``quick_init`` record (every field not in ``changes`` taken
    from ``record``), its field names read once per class, not looked up for every copy."""
    names = getattr(type(record), "__quick_fields__", None)
    if names is None:
        return dataclasses.replace(record, **changes)  # type: ignore[type-var]
    unknown = changes.keys() - set(names)
    if unknown:
        raise TypeError(f"{type(record).__name__} has no field(s) {sorted(unknown)}")
    return type(record)(**{name: changes[name] if name in changes else getattr(record, name)
                           for name in names})

"""One small name -> factory registry, behind the models (`forecaster.models`) and the sequence mixers.

Providers are modules whose import registers entries; they are imported on the first lookup, so modules
that register can import the registry without import cycles.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from forecaster.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Case-insensitive names of one `kind` ("model", "mixer") mapped to factories."""

    def __init__(self, kind: str, providers: Iterable[str] = ()) -> None:
        self.kind = kind
        self.providers = tuple(providers)
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator that registers a class or factory under the lower-case `name`."""
        key = name.lower()

        def decorate(entry: T) -> T:
            if self._entries.get(key, entry) is not entry:
                raise ValueError(f"{self.kind} {key!r} is registered twice")
            self._entries[key] = entry
            return entry

        return decorate

    def _load_providers(self) -> None:
        for module in self.providers:
            importlib.import_module(module)

    def names(self) -> list[str]:
        """The registered names, sorted."""
        self._load_providers()
        return sorted(self._entries)

    def get(self, name: str) -> T:
        """The entry registered as `name`; ConfigError listing the known names otherwise."""
        self._load_providers()
        entry = self._entries.get(str(name).lower())
        if entry is None:
            shown = name if len(str(name)) <= 80 else f"{str(name)[:80]}..."
            known = ", ".join(sorted(self._entries))
            raise ConfigError(f"unknown {self.kind} {shown!r}; expected one of {known}")
        return entry

    def __contains__(self, name: object) -> bool:
        self._load_providers()
        return isinstance(name, str) and name.lower() in self._entries

"""Extensions installed for one test: registered with plugman's plugin manager in this process,
or declared as entry points in a site folder, where plugman (this process or a subprocess)
finds them as it finds an installed package's."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from plugman import extensions
from plugman.api import ENTRY_POINTS
from plugman.testing.env import PlugmanEnv


class Extensions:
    """The `plugman_extension` fixture: what it installs is gone when the test ends."""

    def __init__(self, env: PlugmanEnv, monkeypatch: pytest.MonkeyPatch) -> None:
        self.env = env
        self.monkeypatch = monkeypatch
        self.registered: list[tuple[object, str | None]] = []
        self.paths: list[Path] = []
        self.on_path = False

    def register(self, plugin: object, name: str | None = None) -> None:
        """Register `plugin` (a module, or an object with `@hookimpl` methods) as plugman
        registers a loaded entry point. In this process only: a plugman subprocess does not
        see it (use `entry_points`)."""
        extensions.manager().register(plugin, name)
        self.registered.append((plugin, name))

    def entry_points(
        self,
        points: Mapping[str, str],
        *,
        path: Path | None = None,
        dist: str = "plugman-test-extension",
    ) -> None:
        """Declare `points` (entry-point name -> `module` or `module:attribute`) in the
        `plugman` group of a distribution `dist`, as `pip install` would, and put `path` (the
        folder holding the modules, if they are not importable already) on the import path of
        this process and of every plugman subprocess the runner starts."""
        info = self.env.site / f"{dist.replace('-', '_')}-0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0\n")
        lines = [f"[{ENTRY_POINTS}]", *(f"{name} = {value}" for name, value in points.items())]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        for folder in ([] if self.on_path else [self.env.site]) + ([path] if path else []):
            self.monkeypatch.syspath_prepend(str(folder))
            self.monkeypatch.setenv("PYTHONPATH", str(folder), prepend=os.pathsep)
            self.paths.append(folder)
        self.on_path = True
        self._reload()

    def close(self) -> None:
        """Unregister everything and forget every module imported from the added folders."""
        self.registered.clear()
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None) or ""
            if any(file.startswith(str(folder) + os.sep) for folder in self.paths):
                del sys.modules[name]
        importlib.invalidate_caches()
        extensions.manager.cache_clear()

    def _reload(self) -> None:
        """A new plugin manager, reading the entry points again, with what `register` added."""
        importlib.invalidate_caches()
        extensions.manager.cache_clear()
        for plugin, name in self.registered:
            extensions.manager().register(plugin, name)

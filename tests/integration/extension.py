"""The example extension (examples/plugman-example), installed for real: built and installed
by pip, offline, into a folder of its own, which a test puts on the import path of plugman
in this process (`example_extension` fixture) or of a plugman subprocess (`PYTHONPATH`)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugman import extensions

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugman-example"


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the installed example package and its entry points (dist-info)."""
    site = tmp_path_factory.mktemp("example-site")
    pip = (sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index")
    subprocess.run(
        [*pip, "--no-build-isolation", "--target", str(site), str(EXAMPLE)],
        check=True,
        capture_output=True,
    )
    return site


@pytest.fixture
def example_extension(example_site: Path) -> Iterator[dict[str, str]]:
    """The example installed for this process (its entry points load with plugman's plugin
    manager) and the environment a plugman subprocess needs to see it too."""
    sys.path.insert(0, str(example_site))
    importlib.invalidate_caches()
    extensions.manager.cache_clear()
    try:
        yield {"PYTHONPATH": str(example_site)}
    finally:
        sys.path.remove(str(example_site))
        for name in [name for name in sys.modules if name.startswith("plugman_example")]:
            del sys.modules[name]
        importlib.invalidate_caches()
        extensions.manager.cache_clear()

"""plugman.api, the extensions' public names: what a type checker sees is what runs, importing
it costs no plugman module, and the wheel ships it typed (py.typed) with the test kit's pytest
plugin."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from plugman import api

ROOT = Path(__file__).resolve().parents[2]


def _typed_names() -> dict[str, str]:
    """The names the `if TYPE_CHECKING:` block imports, by the module they come from."""
    tree = ast.parse((ROOT / "plugman" / "api.py").read_text())
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n)
    )
    return {
        alias.asname or alias.name: node.module or ""
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module != "typing"
        for alias in node.names
    }


def test_what_a_type_checker_sees_is_what_runs() -> None:
    assert _typed_names() == api.WHERE
    assert sorted(api.__all__) == sorted(["API_VERSION", "ENTRY_POINTS", *api.WHERE])
    for name, module in api.WHERE.items():
        assert getattr(api, name) is getattr(importlib.import_module(module), name), name
    assert set(dir(api)) == set(api.__all__)
    with pytest.raises(AttributeError, match="no attribute 'extensions'"):
        api.__getattr__("extensions")


def test_the_version_and_the_hooks() -> None:
    major, minor = api.API_VERSION.split(".")
    assert (int(major), int(minor)) >= (1, 0)
    from plugman import hookspecs

    assert set(api.HOOKS) == {name for name in vars(hookspecs) if name.startswith("plugman_")}
    assert hookspecs.hookimpl.project_name == api.ENTRY_POINTS


def test_importing_the_api_imports_no_other_plugman_module() -> None:
    code = "import sys, plugman.api; print(sorted(m for m in sys.modules if 'plugman' in m))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['plugman', 'plugman.api']"


def test_the_wheel_ships_the_api_typed_and_the_test_kit(tmp_path: Path) -> None:
    pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index"]
    subprocess.run(
        [*pip, "--no-build-isolation", "--wheel-dir", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("plugman-*.whl")
    with zipfile.ZipFile(wheel) as built:
        names = set(built.namelist())
        assert {"plugman/py.typed", "plugman/api.py", "plugman/testing/plugin.py"} <= names
        (points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        text = built.read(points).decode()
    assert "[pytest11]\nplugman = plugman.testing.plugin\n" in text

"""Read-back maps Claude Code's plugin ids back to plugman's through the deployed links: the
id `readback.claude_id` reads from a link is the one `claude_plugin.plan` gives that plugin
(`NativePlan.ids`), in every scope and both ways (skills-folder link, generated marketplace)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugman.agents import claude_plugin, readback
from plugman.agents.claude_plugin import NativePlugin
from plugman.core.state import Scope


@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_the_id_read_from_a_deployed_link_is_the_one_the_plan_gives(
    scope: Scope, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    plugins = [
        NativePlugin("demo@market", "demo-plugin", store / "a", "1.0.0"),
        NativePlugin("loose@direct", "loose", store / "b", None, {"strict": False}),
    ]
    for plugin in plugins:
        (plugin.root / ".claude-plugin").mkdir(parents=True)
    home, project = tmp_path / "home", tmp_path / "project"
    plan = claude_plugin.plan(scope, home, project, {"HOME": str(home)}, plugins)
    by_target = {p.root: p.id for p in plugins}
    found = {by_target[link.target]: readback.claude_id(link.path) for link in plan.links}
    assert found == plan.ids and len(found) == 2

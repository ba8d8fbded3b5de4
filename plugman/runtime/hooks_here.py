"""The hooks of the resolved config here, for `plugman hooks list` and `plugman hooks run`.

The one place that resolves the config for the hooks runner and gives it its arguments: the
working directory (the event's `cwd` when it is a folder, else the project), the environment,
the project folder and each plugin's data folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from plugman.config.merge import Resolved
    from plugman.core.paths import Paths
    from plugman.runtime.hook_outcome import HookRun


class ListedHook(NamedTuple):
    """One resolved hook, in run order (`plugman hooks list`)."""

    event: str
    matcher: str | None
    type: Any  # the handler's `type`, as written
    command: Any  # its url, command or prompt, as written
    handler: dict[str, Any]  # redacted
    origin: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


class DroppedHook(NamedTuple):
    """A hook resolution dropped, and why."""

    name: str
    reason: str
    detail: str
    origin: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


class HookListing(NamedTuple):
    hooks: list[ListedHook]
    dropped: list[DroppedHook]


def listing(resolved: Resolved) -> HookListing:
    """The resolved hooks in run order, and the hooks resolution dropped (with why)."""
    from plugman.config.redact import entry

    hooks = [
        ListedHook(
            event=h.event,
            matcher=h.matcher,
            type=h.handler.get("type"),
            command=h.handler.get("url") or h.handler.get("command") or h.handler.get("prompt"),
            handler=entry(h.handler),
            origin=h.origin._asdict(),
        )
        for h in resolved.hooks
    ]
    dropped = [
        DroppedHook(d.name, d.reason, d.detail, d.origin._asdict())
        for d in resolved.dropped
        if d.kind == "hook"
    ]
    return HookListing(hooks, dropped)


def listed_here(paths: Paths, env: Mapping[str, str]) -> HookListing:
    """The hooks of the config resolved here (`env`: the environment to resolve with)."""
    return listing(_resolved(paths, env))


def run_here(paths: Paths, event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookRun:
    """Run `event`'s hooks of the config resolved here with the event JSON `payload`, in the
    event's `cwd` when it is a folder (else the project folder)."""
    from plugman.runtime.hooks import check_event, run_hooks

    check_event(event)
    cwd = payload.get("cwd")
    return run_hooks(
        event,
        payload,
        _resolved(paths, env).hooks,
        cwd=Path(cwd) if isinstance(cwd, str) and Path(cwd).is_dir() else paths.project_dir,
        env=env,
        project_dir=paths.project_dir,
        plugin_data=paths.plugin_data,
    )


def _resolved(paths: Paths, env: Mapping[str, str]) -> Resolved:
    from plugman.config import trust

    _, result = trust.resolved_here(paths, dict(env))
    resolved: Resolved = result
    return resolved

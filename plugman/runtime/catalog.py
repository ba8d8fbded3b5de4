"""What the gateway offers: every connected backend's tools, resources and prompts, in one set.

- Tools and prompts get their namespaced names, `mcp__<server>__<name>` or
  `mcp__plugin_<plugin>_<server>__<name>` (plugman.runtime.naming); a route maps each back to
  its backend and the backend's own name.
- Backends are taken in name order; when two give the same name (or, for resources, the same
  URI, or the same URI template), the first keeps it and the others are reported.
- Tool descriptions over 2,048 characters are cut, ending in a marker (plugman.runtime.pool);
  annotations, schemas, titles and icons travel along unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from plugman.runtime.backends import Backend
from plugman.runtime.naming import tool_name
from plugman.runtime.pool import cut


@dataclass(frozen=True)
class Route:
    backend: Backend
    name: str  # the backend's own name (tool or prompt)
    item: Any  # what the gateway lists: mcp.types.Tool or Prompt, renamed


@dataclass
class Catalog:
    tools: dict[str, Route] = field(default_factory=dict)
    prompts: dict[str, Route] = field(default_factory=dict)
    resources: dict[str, Route] = field(default_factory=dict)  # by URI
    templates: list[tuple[re.Pattern[str], Route]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # what a later backend lost, said plainly

    def resource_route(self, uri: str) -> Route | None:
        """The backend serving `uri`: a listed resource, else the first matching template."""
        found = self.resources.get(uri)
        if found is not None:
            return found
        return next((route for pattern, route in self.templates if pattern.fullmatch(uri)), None)

    def listing(self, kind: str) -> list[Any]:
        """What `tools/list`, `prompts/list`, `resources/list` or `resources/templates/list`
        returns, in pool order."""
        if kind == "templates":
            return [route.item for _, route in self.templates]
        routes: dict[str, Route] = getattr(self, kind)
        return [route.item for route in routes.values()]


def build(backends: Iterable[Backend]) -> Catalog:
    """The catalog of the backends that are up, taken in name order."""
    found = Catalog()
    for backend in sorted(backends, key=lambda b: b.name):
        if backend.state != "up":
            continue
        for tool in backend.tools:
            item = tool.model_copy(
                update={
                    "name": _pooled(backend, tool.name),
                    "description": cut(tool.description) if tool.description else None,
                }
            )
            _claim(found, found.tools, item.name, Route(backend, tool.name, item), "tool")
        for prompt in backend.prompts:
            item = prompt.model_copy(update={"name": _pooled(backend, prompt.name)})
            _claim(found, found.prompts, item.name, Route(backend, prompt.name, item), "prompt")
        for resource in backend.resources:
            uri = str(resource.uri)
            _claim(found, found.resources, uri, Route(backend, uri, resource), "resource")
        _templates(found, backend)
    return found


def _pooled(backend: Backend, name: str) -> str:
    return tool_name(backend.server, name, backend.plugin)


def _claim(found: Catalog, table: dict[str, Route], key: str, route: Route, kind: str) -> None:
    winner = table.get(key)
    if winner is None:
        table[key] = route
        return
    found.conflicts.append(
        f"{kind} {key} of {route.backend.name} is hidden: {winner.backend.name} has it too"
    )


def _templates(found: Catalog, backend: Backend) -> None:
    taken = {route.item.uri_template: route for _, route in found.templates}
    for template in backend.templates:
        winner = taken.get(template.uri_template)
        if winner is not None:
            found.conflicts.append(
                f"resource template {template.uri_template} of {backend.name} is hidden: "
                f"{winner.backend.name} has it too"
            )
            continue
        route = Route(backend, template.uri_template, template)
        found.templates.append((template_pattern(template.uri_template), route))


def template_pattern(template: str) -> re.Pattern[str]:
    """A URI template (RFC 6570) as a regex: `{name}` matches one path segment, an operator
    form (`{+path}`, `{/a,b}`, `{?q}`, ...) matches anything."""
    regex = ""
    for part in re.split(r"(\{[^}]*\})", template):
        if not part.startswith("{"):
            regex += re.escape(part)
        elif re.fullmatch(r"\{[A-Za-z0-9_.%]+\}", part):
            regex += "[^/]+"
        else:
            regex += ".*"
    return re.compile(regex)

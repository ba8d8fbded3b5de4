"""The HTTP gateway's Redis options put together (`--redis URL`, else `PLUGMAN_REDIS_URL`;
`--shared-oauth`): resumable 2025-era events (plugman.runtime.gateway.events), list changes fanned
out between replicas (plugman.runtime.gateway.shared), backend OAuth logins sealed in Redis
(plugman.runtime.oauth.sealed). Nothing here talks to Redis before the gateway serves, so a
replica starts with Redis down.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio.abc

from plugman.core.errors import UsageError
from plugman.core.secrets import Store
from plugman.runtime.gateway.events import Events
from plugman.runtime.gateway.shared import VARIABLE, Fanout, Link, fleet, redis_url
from plugman.runtime.oauth.sealed import KEY_VARIABLE, Keyring, SharedLogins

if TYPE_CHECKING:
    from plugman.runtime.gateway.server import Gateway


@dataclass
class Fleet:
    url: str
    keyring: Keyring | None  # --shared-oauth
    fanout: Fanout | None = field(default=None, init=False)

    @classmethod
    def from_options(
        cls, given: str | None, shared_oauth: bool, env: dict[str, str]
    ) -> Fleet | None:
        """The Redis options, checked (a UsageError before anything starts); the URL and the
        key are taken out of `env`."""
        url = redis_url(given, env)
        env.pop(VARIABLE, None)
        keyring = Keyring.from_env(env) if shared_oauth and url else None
        env.pop(KEY_VARIABLE, None)
        if url is None:
            if shared_oauth:
                raise UsageError(
                    "--shared-oauth keeps logins in Redis, and no Redis is given",
                    hint=f"add --redis URL, or set {VARIABLE}",
                )
            return None
        fleet("redis.asyncio")  # the fleet extra is installed, or say how to install it
        return cls(url, keyring)

    @property
    def logins(self) -> Callable[[Store | None], Any] | None:
        """For plugman.runtime.oauth.provider.authorizer: the store of shared logins around this
        replica's own (None without --shared-oauth)."""
        keyring = self.keyring
        if keyring is None:
            return None
        return lambda local: SharedLogins(self.url, keyring, local)

    def events(self, gateway: Gateway) -> Events:
        """The event store of the gateway's sessions; its list changes published to, and heard
        from, the other replicas."""
        link = Link(self.url)
        self.fanout = Fanout(link, gateway.notify)
        gateway.publish = self.fanout.publish
        return Events(link)

    def start(self, group: anyio.abc.TaskGroup) -> None:
        if self.fanout is not None:
            group.start_soon(self.fanout.run, name="list changes from other replicas")

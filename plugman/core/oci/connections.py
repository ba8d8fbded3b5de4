"""A connection to a registry's URL: https (through the `https_proxy` / `HTTPS_PROXY` proxy,
tunnelled with CONNECT, when one is set and `no_proxy` does not name the host, as urllib and
plugman.core.download do), or plain http to this machine only. TLS is always with the registry
itself; the proxy sees only the host and port."""

from __future__ import annotations

import base64
import http.client
from urllib.parse import SplitResult, unquote, urlsplit

from plugman.core.errors import FetchError
from plugman.core.oci.reference import LOOPBACK, hostname

TIMEOUT = 60.0


class RegistryError(FetchError):
    """The registry refused, failed or answered something plugman will not take."""


def check_url(url: str, *, redirect: bool, what: str = "redirect") -> None:
    """https://, or http:// to this machine only."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" or (parts.scheme == "http" and host in LOOPBACK):
        return
    raise RegistryError(
        f"the registry's {what} {url!r} is not https",
        hint="plugman talks to registries over https only (plain http to 127.0.0.1 or "
        "localhost)" + (": a redirect may not leave it" if redirect else ""),
    )


def opened(url: str) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    if parts.scheme == "https":
        proxy = _proxy(parts.hostname or "")
        if proxy is None:
            return http.client.HTTPSConnection(parts.netloc, timeout=TIMEOUT)
        connection = http.client.HTTPSConnection(
            proxy.hostname or "", proxy.port or 8080, timeout=TIMEOUT
        )
        connection.set_tunnel(parts.hostname or "", parts.port or 443, _proxy_headers(proxy))
        return connection  # TLS with the registry itself, through the proxy's CONNECT tunnel
    if hostname(parts.netloc) not in LOOPBACK:
        check_url(url, redirect=False)
    return http.client.HTTPConnection(parts.netloc, timeout=TIMEOUT)


def _proxy(host: str) -> SplitResult | None:
    """The proxy `https_proxy` / `HTTPS_PROXY` names for `host` (none for this machine, or for
    a host `no_proxy` names), as urllib and download.py use it."""
    import urllib.request  # lazy: urllib takes ~18 ms to import, only this path needs it

    found = urllib.request.getproxies().get("https")
    if not found or host in LOOPBACK or urllib.request.proxy_bypass(host):
        return None
    proxy = urlsplit(found if "://" in found else f"http://{found}")
    if proxy.scheme != "http" or not proxy.hostname:
        raise RegistryError(
            f"the https proxy {proxy.scheme}://{proxy.hostname or ''} is not an http:// proxy",
            hint="set HTTPS_PROXY to http://HOST:PORT (plugman tunnels TLS through it)",
        )
    return proxy


def _proxy_headers(proxy: SplitResult) -> dict[str, str]:
    """Basic credentials for the proxy, when its URL carries them."""
    if proxy.username is None:
        return {}
    pair = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}"
    return {"Proxy-Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}

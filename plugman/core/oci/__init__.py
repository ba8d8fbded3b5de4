"""OCI registries: plugin artifacts pushed to and pulled from a registry over the distribution
HTTP API (`reference`, `transport`, `credentials`, `client`), every digest verified.

Its face (`__all__`): the submodules the rest of plugman uses; `credentials` and `transport`
are its own."""

__all__ = ["client", "connections", "login", "reference", "referrers"]

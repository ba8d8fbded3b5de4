"""OCI registries: plugin artifacts pushed to and pulled from a registry over the distribution
HTTP API (`reference`, `transport`, `credentials`, `client`), every digest verified."""

"""Making and publishing plugins and marketplaces: scaffolds and templates, packing,
publishing to a registry, building a marketplace catalog, tagging releases.

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "market_build",
    "pack",
    "publish",
    "scaffold",
    "tagging",
]

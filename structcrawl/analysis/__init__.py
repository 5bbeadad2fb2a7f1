"""Offline and measuring code beside the core: fingerprints, UXClust, sample pages, URL patterns, classification,
quality measures."""

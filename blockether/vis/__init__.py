"""Vis under the spec's package name: ``import blockether.vis.extension as vis``."""

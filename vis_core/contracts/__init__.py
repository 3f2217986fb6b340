"""Tool contracts: signatures and annotations described as portable data and ``doc()`` text.

Import the module that holds what you need (``specs``, ``build``, ``render``…): this package
imports none of them, so the one that rebuilds kept declarations loads without the others.
"""

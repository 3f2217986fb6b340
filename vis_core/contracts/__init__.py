"""Tool contracts: signatures and annotations described as portable data and ``doc()`` text."""

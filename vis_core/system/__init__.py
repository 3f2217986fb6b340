"""OS helpers below the SDK: git, the jail, child environments and lifetimes, atomic writes."""

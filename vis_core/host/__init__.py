"""The composition root: the services of one running Vis, built in dependency order."""

from vis_core.host.host import Host
from vis_core.host_options import HostOptions

__all__ = ["Host", "HostOptions"]

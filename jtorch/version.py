"""torch.version: the release and the device toolkits this build has (none)."""

from . import __version__  # noqa: F401  (the package's own)

debug = False
cuda = None
hip = None
xpu = None
git_version = "unknown"

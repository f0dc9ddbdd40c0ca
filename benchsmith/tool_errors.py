"""The error every layer raises when an external tool cannot run at all (not installed, or the machine cannot
confine it): a leaf module, so that the runner and the confinement layer beneath it share one class without
importing each other."""


class ToolMissing(RuntimeError):
    pass

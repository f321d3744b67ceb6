"""An example autonesy plugin (docs/plugins.md): the policy ``example/vote`` and the task ``example/shifts``."""

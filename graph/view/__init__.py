"""A web viewer over run, sweep and verification directories (``autonesy-agent view DIR…``), and the
static export of the same pages (``report --html``). It only reads and renders what is on disk."""

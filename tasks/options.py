"""The choices a user has among the tasks' settings (``--detail``), defined once and light to import."""

DETAIL_LEVELS = ("detailed", "not-detailed")  # how much a task description tells

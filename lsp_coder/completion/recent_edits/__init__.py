"""The user's last edits as prompt context (``record.RecentEdits``; ``hunks``: finding and
showing the changed regions)."""

from .record import RecentEdits

__all__ = ["RecentEdits"]

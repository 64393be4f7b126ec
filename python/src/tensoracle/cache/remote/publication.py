"""What publishing one entry to the remote cache did (``fleet.publish``, ``publish_bytes``)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class PublishOutcome(enum.Enum):
    PUBLISHED = "published"  # this call created the object
    ALREADY_PRESENT = "already present"  # the object existed: left as it was (create-only)
    NOT_PUBLISHED = "not published"  # nothing was written; ``Publication.reason`` says why


@dataclass(frozen=True)
class Publication:
    """The outcome of publishing an entry, the object's URL (None when no remote cache is
    configured) and, when it was not published, why."""

    outcome: PublishOutcome
    url: str | None
    reason: str | None = None

    @property
    def published(self) -> bool:
        """True only when this call created the object."""
        return self.outcome is PublishOutcome.PUBLISHED

    @property
    def present(self) -> bool:
        """True when the remote cache holds an object for the entry after the call (published
        now, or before)."""
        return self.outcome is not PublishOutcome.NOT_PUBLISHED

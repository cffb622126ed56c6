"""Code from beyond the open file: definitions the cursor uses, similar code, the workspace."""

from .section import RelatedContext, Section

__all__ = ["RelatedContext", "Section"]

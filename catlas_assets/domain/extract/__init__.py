"""Structured extraction: from a normalized page (or a vendor API answer) to typed entities."""

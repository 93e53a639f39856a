"""Actions the person confirms: the rules (``confirm`` setting) and the held actions."""

from .board import ConfirmationBoard, Held, HeldState
from .rules import KINDS, ConfirmRule, first_match, parse_rules

__all__ = ["KINDS", "ConfirmRule", "ConfirmationBoard", "Held", "HeldState", "first_match",
           "parse_rules"]

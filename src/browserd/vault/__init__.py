"""The vault: the person's secrets, typed by agents by name and redacted from everything."""

from .key import load_vault_key
from .redactor import MIN_SECRET_CHARS, Redactor, SecretFilter, marker
from .store import SecretRecord, Vault

__all__ = ["MIN_SECRET_CHARS", "Redactor", "SecretFilter", "SecretRecord", "Vault",
           "load_vault_key", "marker"]

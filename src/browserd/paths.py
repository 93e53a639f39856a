"""Where browserd keeps its files, resolved once into a frozen record.

``BROWSERD_HOME`` (when set) puts everything under one directory, which is
what tests and side-by-side instances use; otherwise the platform's dirs come
from platformdirs (e.g. ``~/Library/Application Support/browserd`` on macOS,
``~/.config/browserd`` and ``~/.local/share/browserd`` on Linux).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs
import platformdirs

__all__ = ["APP_NAME", "Paths", "ensure_private_dir"]

APP_NAME = "browserd"


@attrs.frozen(kw_only=True)
class Paths:
    """Every directory browserd uses. Nothing here creates anything."""

    config_dir: Path
    data_dir: Path
    cache_dir: Path
    log_dir: Path

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def token_file(self) -> Path:
        return self.config_dir / "token"

    @property
    def owner_token_file(self) -> Path:
        """The person's token (offering their tabs); the agent is never given it."""
        return self.config_dir / "owner-token"

    @property
    def tokens_file(self) -> Path:
        """Minted agent tokens, as hashes (0600)."""
        return self.config_dir / "tokens.json"

    @property
    def profiles_dir(self) -> Path:
        return self.data_dir / "profiles"

    @property
    def media_dir(self) -> Path:
        return self.cache_dir / "media"

    @property
    def uploads_dir(self) -> Path:
        """The default upload root: files the agent may upload are put here."""
        return self.data_dir / "uploads"

    @property
    def state_dir(self) -> Path:
        """Runtime records (the pid file of the managed browser)."""
        return self.data_dir / "run"

    def downloads_dir(self, profile: str) -> Path:
        """Where the browser of ``profile`` saves downloads (files named by GUID)."""
        return self.data_dir / "downloads" / profile

    def profile_dir(self, name: str) -> Path:
        return self.profiles_dir / name

    @classmethod
    def resolve(cls, environ: Mapping[str, str] | None = None) -> Paths:
        env = os.environ if environ is None else environ
        home = env.get("BROWSERD_HOME")
        if home:
            root = Path(home).expanduser().absolute()
            return cls(
                config_dir=root / "config",
                data_dir=root / "data",
                cache_dir=root / "cache",
                log_dir=root / "logs",
            )
        return cls(
            config_dir=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
            data_dir=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
            cache_dir=Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)),
            log_dir=Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
        )

    def as_dict(self) -> dict[str, str]:
        return {k: str(v) for k, v in attrs.asdict(self).items()}


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and parents) with mode 0700 if missing."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)

"""``browserd extension install | pair | unpair``: local files only, no service needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browserd.cli.main import main
from browserd.paths import Paths
from browserd.relay import PairingStore


def test_install_copies_the_extension_and_says_how_to_load_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BROWSERD_HOME", str(tmp_path))
    assert main(["extension", "install"]) == 0
    out = capsys.readouterr().out
    folder = tmp_path / "data" / "extension"
    assert "Developer mode" in out and "Load unpacked" in out and str(folder) in out
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["manifest_version"] == 3
    assert {"debugger", "tabs", "tabGroups", "storage"} <= set(manifest["permissions"])
    for name in (manifest["background"]["service_worker"], manifest["options_ui"]["page"],
                 "options.js"):
        assert (folder / name).is_file()


def test_pair_prints_a_code_the_store_accepts_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BROWSERD_HOME", str(tmp_path))
    assert main(["extension", "pair", "--profile", "work", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["profile"] == "work" and answer["expiresInS"] == 600
    store = PairingStore(Paths.resolve({"BROWSERD_HOME": str(tmp_path)}).config_dir)
    paired, token = store.exchange(answer["code"], "a" * 32)
    assert paired.profile == "work" and store.lookup(token) is not None
    assert main(["extension", "unpair", "--profile", "work"]) == 0
    assert store.lookup(token) is None
    assert main(["extension", "pair", "--profile", "Not A Name"]) == 1

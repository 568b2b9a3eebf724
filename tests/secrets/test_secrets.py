"""Hostile tests of the secret store: a `secret://NAME/KEY` reference never reads outside
REVIEWER_SECRETS_DIR, whatever the reference or the directory's links say, and never hangs."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from bot.commands.cli import main
from bot.secrets.references import MAX_SECRET_BYTES, SecretError, SecretStore, resolve

OUTSIDE_VALUE = "outside-the-store-value"


@pytest.fixture
def layout(tmp_path):
    """ROOT (the store) beside OUTSIDE, a directory the store must never read from."""
    root, outside = tmp_path / "store", tmp_path / "outside"
    (root / "app").mkdir(parents=True)
    (root / "app" / "key").write_text("inside-value\n")
    outside.mkdir()
    (outside / "key").write_text(OUTSIDE_VALUE)
    return root, outside


def _refused(reference: str, root) -> SecretError:
    with pytest.raises(SecretError) as caught:
        resolve(reference, SecretStore(str(root)))
    assert OUTSIDE_VALUE not in str(caught.value)
    return caught.value


@pytest.mark.parametrize("reference", [
    "secret://../outside/key", "secret://app/..", "secret://app/.", "secret:///etc/passwd",
    "secret://app/../../outside/key", "secret://app/sub/key", "secret://..%2foutside/key", "secret://app",
    "secret://APP/key", "secret://app/ke y",
])
def test_a_reference_that_names_a_path_is_malformed(layout, reference):
    root, _ = layout
    assert _refused(reference, root).malformed


def test_a_plain_reference_resolves(layout):
    root, _ = layout
    assert resolve("secret://app/key", SecretStore(str(root))) == "inside-value"


def test_a_key_that_is_a_symlink_out_of_the_store_is_refused(layout):
    root, outside = layout
    os.symlink(outside / "key", root / "app" / "linked")
    assert not _refused("secret://app/linked", root).malformed
    os.symlink("/etc/passwd", root / "app" / "passwd")
    _refused("secret://app/passwd", root)
    os.symlink("../../outside/key", root / "app" / "relative")
    _refused("secret://app/relative", root)


def test_a_name_that_is_a_symlink_out_of_the_store_is_refused(layout):
    root, outside = layout
    os.symlink(outside, root / "elsewhere")
    _refused("secret://elsewhere/key", root)


def test_links_that_stay_inside_are_followed_as_kubernetes_mounts_them(layout, tmp_path):
    root, _ = layout
    data = root / "mounted" / "..2026_11_24"
    data.mkdir(parents=True)
    (data / "token").write_text("mounted-value")
    os.symlink("..2026_11_24", root / "mounted" / "..data")
    os.symlink("..data/token", root / "mounted" / "token")
    assert resolve("secret://mounted/token", SecretStore(str(root))) == "mounted-value"
    os.symlink(root, tmp_path / "store-link")  # the store itself may be reached through a link
    assert resolve("secret://mounted/token", SecretStore(str(tmp_path / "store-link"))) == "mounted-value"


def test_what_is_not_a_regular_file_is_refused_without_hanging(layout):
    root, _ = layout
    os.mkfifo(root / "app" / "fifo")  # opened for reading, a FIFO blocks until a writer comes
    (root / "app" / "dir").mkdir()
    os.symlink("/dev/zero", root / "app" / "zero")
    with ThreadPoolExecutor(1) as pool:
        for key in ("fifo", "dir", "zero"):
            future = pool.submit(lambda: _refused(f"secret://app/{key}", root))
            assert not future.result(timeout=5).malformed


def test_oversized_and_undecodable_files_are_refused(layout):
    root, _ = layout
    (root / "app" / "big").write_bytes(b"a" * (MAX_SECRET_BYTES + 1))
    (root / "app" / "binary").write_bytes(b"\xff\xfe\x00")
    (root / "app" / "empty").write_text("\n")
    for key in ("big", "binary"):
        assert "does not hold it" in str(_refused(f"secret://app/{key}", root))
    assert "empty" in str(_refused("secret://app/empty", root))
    assert "REVIEWER_SECRETS_DIR is unset" in str(_refused("secret://app/key", ""))


def test_reviewer_validate_refuses_a_link_out_of_the_store(layout, tmp_path, capsys):
    root, outside = layout
    os.symlink(outside / "key", root / "app" / "linked")
    path = tmp_path / "okta.yaml"
    path.write_text("apiVersion: resources.service.dev/v3\nkind: ServiceOIDCConnector\nmetadata: {name: okta}\n"
                    "spec:\n  issuer_url: https://idp.example.com\n  client_id: c\n"
                    "  client_secret: secret://app/linked\n  redirect_url: ['https://r.example.com/cb']\n"
                    "  claims_to_roles: [{claim: g, value: v, roles: [r]}]\n")
    assert main(["validate", str(path), "--secrets-dir", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:7:18: secret-reference:" in out and OUTSIDE_VALUE not in out

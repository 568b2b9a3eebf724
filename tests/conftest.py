"""Fixtures shared by the whole suite. Keep each one small and generic; put the rest beside its tests."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.github_double import App, GitHubDouble


@pytest.fixture(scope="session")
def app_private_key() -> str:
    """A GitHub App private key (PEM), made fresh for this test run: no key is ever committed."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@pytest.fixture
async def github():
    """The GitHub double, started on 127.0.0.1; the test fails if the app broke GitHub's REST description."""
    double = GitHubDouble()
    await double.start()
    try:
        yield double
    finally:
        await double.close()
    assert double.violations == [], "requests that GitHub's REST description refuses:\n" + "\n".join(double.violations)


@pytest.fixture
def github_app(github: GitHubDouble, app_private_key: str) -> App:
    """The app, registered with the double under the public half of `app_private_key`."""
    key = serialization.load_pem_private_key(app_private_key.encode(), password=None)
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return github.add_app(public.decode())

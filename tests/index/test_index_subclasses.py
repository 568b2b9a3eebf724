"""A method called through a receiver declared of a subclass that does not override it is the
superclass's (Python's `class AsyncClient(BaseClient)`, across files and imports); a subclass
that overrides it has its own."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers, context_of

BASE = ("class BaseClient:\n    def build_request(self, url):\n        return url\n\n\n"
        "class Transport:\n    def build_request(self, url):\n        return url.strip()\n")
CLIENTS = ("from ._base import BaseClient\n\n\nclass Client(BaseClient):\n    pass\n\n\n"
           "class AsyncClient(Client):\n    pass\n\n\nclass Mocked(BaseClient):\n"
           "    def build_request(self, url):\n        return 'mock'\n")
USES = ("from ._clients import AsyncClient, Mocked\n\n\ndef fetch(client: AsyncClient, url):\n"
        "    return client.build_request(url)\n\n\ndef fake(client: Mocked, url):\n    return client.build_request(url)\n")


def test_python_a_method_is_called_through_a_receiver_of_a_subclass(capsys, tmp_path: Path) -> None:
    base = {"pkg/__init__.py": "", "pkg/_base.py": BASE, "pkg/_clients.py": CLIENTS, "pkg/_uses.py": USES}
    head = {"pkg/_base.py": BASE.replace("        return url\n", "        return str(url)\n", 1)}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("pkg/_uses.py", "fetch")]

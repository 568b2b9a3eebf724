"""JavaScript's and TypeScript's idioms that bind a name without an import of it: the methods and
getters of an exported object literal reaching each other through `this`."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers, context_of

REQUEST = ("'use strict'\n\nmodule.exports = {\n  get host () {\n    const host = this.get('Host')\n"
           "    return host || ''\n  },\n\n  get hostname () {\n    const host = this.host\n"
           "    return host.split(':', 1)[0]\n  },\n\n  get (field) {\n    return this.req.headers[field]\n  }\n}\n")
SERVER = "class Server {\n  constructor () {\n    this.host = 'localhost'\n  }\n\n  describe () {\n" \
         "    return this.host\n  }\n}\n\nmodule.exports = Server\n"


def test_js_a_getter_of_an_exported_object_is_used_by_its_siblings_through_this(capsys, tmp_path: Path) -> None:
    base = {"lib/request.js": REQUEST, "lib/server.js": SERVER}
    head = {"lib/request.js": REQUEST.replace("return host || ''", "return (host || '').trim()")}
    assert sorted(callers(context_of(capsys, tmp_path, base, head))) == [("lib/request.js", "hostname")]

"""compose.yaml against the Compose specification's published JSON Schema (the copy the PyPI
package check-jsonschema vendors from the compose-spec project), and against what Reviewer needs of
it: web and worker on a shared PostgreSQL, the secret store mounted where the image looks for it,
health checks, a named volume, a grace period longer than a graceful stop."""

from __future__ import annotations

import copy
import json
import re
from importlib import resources
from pathlib import Path

import pytest
from jsonschema.validators import validator_for
from ruamel.yaml import YAML

from bot.server.process import STOP_WITHIN

ROOT = Path(__file__).resolve().parent.parent.parent
COMPOSE = ROOT / "compose.yaml"


@pytest.fixture(scope="module")
def compose_schema() -> dict:
    text = resources.files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text()
    schema = json.loads(text)
    assert schema["title"] == "Compose Specification"
    return schema


def _errors(schema: dict, document: dict) -> list[str]:
    validator = validator_for(schema)
    validator.check_schema(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(schema).iter_errors(document)]


def _compose() -> dict:
    return YAML(typ="safe").load(COMPOSE.read_text())  # merge keys (`<<: *reviewer`) resolved


def test_compose_yaml_is_valid_against_the_compose_specification(compose_schema):
    assert _errors(compose_schema, _compose()) == []


@pytest.mark.parametrize("mistake", [
    lambda d: d["services"]["web"].update(healthchek={"test": ["CMD", "true"]}),  # a misspelt key
    lambda d: d["services"]["worker"].update(ports="8080:8080"),  # ports is a list
    lambda d: d["services"]["postgres"]["healthcheck"].update(interval=5),  # a duration is a string
])
def test_the_schema_catches_the_mistakes_it_exists_for(compose_schema, mistake):
    document = copy.deepcopy(_compose())
    mistake(document)
    assert _errors(compose_schema, document) != []


def _secrets_dir_of_the_image() -> str:
    found = re.search(r"REVIEWER_SECRETS_DIR=(\S+)", (ROOT / "Dockerfile").read_text())
    assert found
    return found.group(1)


def test_web_and_worker_share_postgresql_and_mount_the_secret_store():
    services = _compose()["services"]
    assert services["web"]["command"] == ["serve", "--no-workers"] and services["worker"]["command"] == ["worker"]
    assert re.fullmatch(r"postgres:\d+", services["postgres"]["image"])  # the official image
    store = _secrets_dir_of_the_image()
    for name in ("web", "worker"):
        service = services[name]
        assert service["environment"]["REVIEWER_DATABASE_URL"].startswith("postgresql://reviewer:")
        assert service["environment"]["REVIEWER_DATABASE_URL"].endswith("@postgres:5432/reviewer")
        assert service["environment"]["REVIEWER_SECRETS_DIR"] == store
        assert f"./secrets:{store}:ro" in service["volumes"]  # read-only where the server runs
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert "/readyz" in " ".join(service["healthcheck"]["test"])
        grace = int(service["stop_grace_period"].removesuffix("s"))
        assert grace > STOP_WITHIN  # a stop finishes or hands back jobs within STOP_WITHIN seconds
    assert f"./secrets:{store}" in services["setup"]["volumes"]  # setup writes the app's credentials
    assert services["setup"]["profiles"] == ["setup"] and services["setup"]["command"] == ["setup"]
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])


def test_the_database_lives_on_a_named_volume_and_no_secret_is_written_in_the_file():
    document = _compose()
    assert "postgres-data" in document["volumes"]
    assert "postgres-data:/var/lib/postgresql/data" in document["services"]["postgres"]["volumes"]
    text = COMPOSE.read_text()
    for variable in re.findall(r"\$\{([^}]*)\}", text):  # each from .env: a default, or an error naming it
        assert re.fullmatch(r"\w+(:-[^}]*|:\?.+)", variable), variable
    assert re.findall(r"POSTGRES_PASSWORD: (.*)", text) == ["${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD in .env}"]

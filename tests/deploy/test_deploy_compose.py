"""compose.yaml against the Compose specification's published JSON Schema (the copy the PyPI
package check-jsonschema vendors from the compose-spec project), and against what Reviewer needs of
it: web and worker on a shared PostgreSQL, the secret store mounted where the image looks for it,
health checks, a named volume, a grace period longer than a graceful stop; and what a person needs
to get in: .env reaching every Reviewer service (`env_file`), the admin token required, the admin
file mounted where REVIEWER_ADMIN_CONFIG points, setup on a port of its own."""

from __future__ import annotations

import copy
import json
import re
from importlib import resources
from pathlib import Path, PurePosixPath

import pytest
from jsonschema.validators import validator_for
from ruamel.yaml import YAML

from bot.config.admin import load_admin_config
from bot.server.process import STOP_WITHIN
from bot.server.settings import KEYS

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


REVIEWER_SERVICES = ("web", "worker", "setup")


def test_env_file_brings_every_line_of_env_to_reviewers_services():
    """Anything an operator puts in .env (REVIEWER_LOG_LEVEL, GITHUB_API_URL, OTEL_*, …) reaches the
    processes: each Reviewer service reads .env whole, and the file's own wiring wins over it."""
    services = _compose()["services"]
    for name in REVIEWER_SERVICES:
        assert services[name]["env_file"] == ".env", name
    assert "env_file" not in services["postgres"]  # the database gets only what it needs
    for name in ("web", "worker"):
        wiring = services[name]["environment"]
        assert wiring["PORT"] == "8080"  # pinned: the health check asks 8080, whatever .env says
        assert {"REVIEWER_DATABASE_URL", "REVIEWER_SECRETS_DIR", "REVIEWER_ADMIN_CONFIG"} <= set(wiring)


def _env_block() -> dict[str, str]:
    """The .env docs/deploy.md writes for Compose."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    compose = text[text.index("## Docker Compose"):text.index("## Kubernetes")]
    [block] = re.findall(r"cat > \.env <<EOF\n(.*?)\nEOF", compose, re.DOTALL)
    return dict(line.split("=", 1) for line in block.splitlines())


def test_the_env_the_docs_write_names_known_settings_and_everything_compose_requires():
    written = _env_block()
    required = set(re.findall(r"\$\{(\w+):\?", COMPOSE.read_text()))
    assert required == {"POSTGRES_PASSWORD", "REVIEWER_PUBLIC_URL", "REVIEWER_ADMIN_TOKEN"}
    assert set(written) == required
    assert all(key in KEYS or key == "POSTGRES_PASSWORD" for key in written)
    assert written["REVIEWER_ADMIN_TOKEN"] == "$(openssl rand -hex 32)"  # made random, never a sample value


def test_the_admin_token_is_required_and_the_admin_file_is_mounted_where_the_settings_point():
    services = _compose()["services"]
    assert services["web"]["environment"]["REVIEWER_ADMIN_TOKEN"].startswith("${REVIEWER_ADMIN_TOKEN:?")
    for name in ("web", "worker"):
        service = services[name]
        admin_path = PurePosixPath(service["environment"]["REVIEWER_ADMIN_CONFIG"])
        [mount] = [v for v in service["volumes"] if isinstance(v, dict) and v["target"] == str(admin_path.parent)]
        assert mount["type"] == "bind" and mount["source"] == "./config" and mount["read_only"] is True
        assert mount["bind"]["create_host_path"] is False  # a missing ./config fails, not an empty directory
    starter = ROOT / "deploy" / "kubernetes" / "admin.yaml"  # what the docs copy to ./config/admin.yaml
    assert "cp deploy/kubernetes/admin.yaml config/admin.yaml" in (ROOT / "docs" / "deploy.md").read_text()
    admin, problems = load_admin_config(starter.read_bytes(), str(starter))
    assert admin is not None and problems == [] and admin.providers  # a model provider: not plan-only
    for provider in admin.providers.values():  # its key in the mounted store, not in the file
        assert provider.api_key and provider.api_key.startswith("secret://")


def test_setup_has_a_port_of_its_own_on_this_machine():
    services = _compose()["services"]
    published = [port.rsplit(":", 2)[-2] for name in services for port in services[name].get("ports", [])]
    assert len(published) == len(set(published)), published  # web and setup can run at once
    [setup_port] = services["setup"]["ports"]
    host, outside, inside = setup_port.split(":")
    assert host == "127.0.0.1" and inside == services["setup"]["environment"]["PORT"] == outside

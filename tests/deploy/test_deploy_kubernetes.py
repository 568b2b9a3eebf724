"""deploy/kubernetes, the kustomize base: rendered with `kubectl kustomize` (Debian's
kubernetes-client, or any kubectl), every object validated with kubernetes-validate against
Kubernetes' own schemas (strict: an unknown field is an error), and checked for what Reviewer
needs: probes on /livez and /readyz, the secret store's layout, a grace period longer than a
graceful stop, requests, disruption budgets, and the CRDs `reviewer crds` prints.

Without kubectl the rendering tests skip saying why, unless REVIEWER_TEST_REQUIRE_KUBECTL=1 (CI).
"""

from __future__ import annotations

import copy
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import kubernetes_validate
import pytest
from kubernetes_validate import utils as kv_utils
from ruamel.yaml import YAML

from bot.config.admin import load_admin_config
from bot.github import credentials
from bot.server.process import STOP_WITHIN
from bot.server.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent.parent
BASE = ROOT / "deploy" / "kubernetes"
VERSIONS = sorted(set(kv_utils.all_versions()), key=lambda v: tuple(map(int, v.split("."))))
OLDEST, NEWEST = VERSIONS[0], VERSIONS[-1]  # Kubernetes releases whose schemas the package ships


def _kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        why = "kubectl is not installed (apt-get install kubernetes-client): the kustomize base is not rendered"
        if os.environ.get("REVIEWER_TEST_REQUIRE_KUBECTL") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return found


@pytest.fixture(scope="module")
def rendered() -> list[dict]:
    result = subprocess.run([_kubectl(), "kustomize", str(BASE)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return [doc for doc in YAML(typ="safe").load_all(result.stdout) if doc]


def _one(objects: list[dict], kind: str, name: str) -> dict:
    [found] = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def _validate(obj: dict, version: str) -> None:
    kubernetes_validate.validate(obj, version, strict=True)


@pytest.mark.parametrize("version", [OLDEST, NEWEST])
def test_every_rendered_object_is_valid_kubernetes(rendered, version):
    kinds = sorted(o["kind"] for o in rendered)
    assert kinds == ["ConfigMap", "ConfigMap", "CustomResourceDefinition", "CustomResourceDefinition", "Deployment",
                     "Deployment", "Ingress", "PodDisruptionBudget", "PodDisruptionBudget", "Service", "ServiceAccount"]
    for obj in rendered:
        _validate(obj, version)


def test_the_validation_catches_the_mistakes_it_exists_for(rendered):
    web = copy.deepcopy(_one(rendered, "Deployment", "reviewer-web"))
    container = web["spec"]["template"]["spec"]["containers"][0]
    container["livenesProbe"] = container.pop("livenessProbe")  # a misspelt field
    with pytest.raises(kubernetes_validate.ValidationError):
        _validate(web, NEWEST)
    pdb = copy.deepcopy(_one(rendered, "PodDisruptionBudget", "reviewer-web"))
    pdb["spec"]["maxUnavailable"] = [1]  # a wrong type
    with pytest.raises(kubernetes_validate.ValidationError):
        _validate(pdb, NEWEST)


def test_the_crds_are_exactly_what_reviewer_crds_prints(rendered):
    printed = subprocess.run([sys.executable, "-m", "bot", "crds"], capture_output=True, text=True, timeout=60,
                             cwd=ROOT, check=True).stdout
    assert (BASE / "crds.yaml").read_text() == printed  # the file, byte for byte
    crds = [o for o in rendered if o["kind"] == "CustomResourceDefinition"]
    assert crds == list(YAML(typ="safe").load_all(io.StringIO(printed)))  # and what kustomize renders of it


def _settings(objects: list[dict]) -> dict:
    """The ConfigMap of settings (kustomize names it `reviewer-<hash>`), not the admin file's."""
    [found] = [o for o in objects if o["kind"] == "ConfigMap" and "REVIEWER_SECRETS_DIR" in o.get("data", {})]
    return found


def _pod(rendered: list[dict], name: str) -> dict:
    return _one(rendered, "Deployment", name)["spec"]["template"]["spec"]


def _pre_stop_seconds(container: dict) -> int:
    """How long the container's preStop hook sleeps (0 without one); any other hook is refused here."""
    hook = container.get("lifecycle", {}).get("preStop")
    if hook is None:
        return 0
    command = hook["exec"]["command"]
    assert len(command) == 2 and command[0] == "sleep" and command[1].isdigit(), command
    return int(command[1])


def test_the_web_pods_keep_answering_until_the_service_stops_routing_to_them(rendered):
    """SIGTERM comes only after a preStop sleep: the endpoints' removal reaches the kube-proxies and
    the Ingress first, so a delivery in flight to a stopping pod is still answered."""
    [container] = _pod(rendered, "reviewer-web")["containers"]
    assert _pre_stop_seconds(container) >= 5


def test_web_and_worker_probe_the_process_and_readiness_apart_and_outlast_a_graceful_stop(rendered):
    for name, args in (("reviewer-web", ["serve", "--no-workers"]), ("reviewer-worker", ["worker"])):
        pod = _pod(rendered, name)
        [container] = pod["containers"]
        assert container["args"] == args
        assert container["livenessProbe"]["httpGet"]["path"] == "/livez"
        assert container["startupProbe"]["httpGet"]["path"] == "/livez"
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        # the preStop hook, then SIGTERM's graceful stop (jobs finish or are handed back), all within the grace
        assert pod["terminationGracePeriodSeconds"] > _pre_stop_seconds(container) + STOP_WITHIN
        assert {"cpu", "memory"} <= set(container["resources"]["requests"])
        assert pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["runAsUser"] == 10001
        assert container["securityContext"]["readOnlyRootFilesystem"]
        assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]  # xmlsec1's files


def test_the_secret_store_is_mounted_in_its_layout_and_the_database_url_is_a_secret(rendered):
    config = _settings(rendered)
    store = config["data"]["REVIEWER_SECRETS_DIR"]
    for name in ("reviewer-web", "reviewer-worker"):
        pod = _pod(rendered, name)
        [container] = pod["containers"]
        assert container["envFrom"] == [{"configMapRef": {"name": config["metadata"]["name"]}}]
        mount = next(m for m in container["volumeMounts"] if m["name"] == "github-app")
        assert mount == {"name": "github-app", "mountPath": f"{store}/{credentials.SECRET_NAME}", "readOnly": True}
        volume = next(v for v in pod["volumes"] if v["name"] == "github-app")
        assert volume["secret"]["secretName"] == credentials.SECRET_NAME
        [database] = [e for e in container["env"] if e["name"] == "REVIEWER_DATABASE_URL"]
        assert database["valueFrom"]["secretKeyRef"] == {"name": "reviewer-database", "key": "url"}
    assert not any(o["kind"] == "Secret" for o in rendered)  # the base ships no secret value


def test_service_ingress_and_budgets_select_what_they_mean(rendered):
    web_labels = _one(rendered, "Deployment", "reviewer-web")["spec"]["template"]["metadata"]["labels"]
    worker_labels = _one(rendered, "Deployment", "reviewer-worker")["spec"]["template"]["metadata"]["labels"]
    service = _one(rendered, "Service", "reviewer")
    assert service["spec"]["selector"].items() <= web_labels.items()
    assert not service["spec"]["selector"].items() <= worker_labels.items()  # workers take no traffic
    backend = _one(rendered, "Ingress", "reviewer")["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == "reviewer" and backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    for name, labels in (("reviewer-web", web_labels), ("reviewer-worker", worker_labels)):
        budget = _one(rendered, "PodDisruptionBudget", name)
        assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_a_mounted_secret_as_the_kubelet_lays_it_out_is_read_by_serve(tmp_path, app_private_key):
    """A Secret volume is `..data` → a timestamped directory, each key a link through `..data`
    (the kubelet's atomic writer): the store reads through those links, inside the store."""
    secret = tmp_path / "secrets" / credentials.SECRET_NAME
    stamped = secret / "..2026_01_01_00_00_00.000000001"
    stamped.mkdir(parents=True)
    for key, value in (("app-id", "31337"), ("private-key", app_private_key), ("webhook-secret", "whsec-k8s")):
        (stamped / key).write_text(value)
    (secret / "..data").symlink_to(stamped.name)
    for key in ("app-id", "private-key", "webhook-secret"):
        (secret / key).symlink_to(f"..data/{key}")
    settings = load_settings({"REVIEWER_SECRETS_DIR": str(tmp_path / "secrets")}, require_app=True)
    assert settings.app_id == 31337 and settings.webhook_secret.reveal() == "whsec-k8s"


def test_the_overlay_docs_deploy_md_shows_renders_what_it_says(tmp_path):
    """docs/deploy.md's overlay, with its base pointed at this checkout: the image, the host and the
    public URL are replaced, and the result is still valid."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    [block] = re.findall(r"```yaml\n(   # kustomization\.yaml of your overlay\n.*?)```", text, re.DOTALL)
    overlay = "\n".join(line[3:] for line in block.splitlines())
    overlay = re.sub(r"resources: \[.*\]", f"resources: [{os.path.relpath(BASE, tmp_path)}]", overlay)
    (tmp_path / "kustomization.yaml").write_text(overlay)
    result = subprocess.run([_kubectl(), "kustomize", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    objects = [doc for doc in YAML(typ="safe").load_all(result.stdout) if doc]
    for obj in objects:
        _validate(obj, NEWEST)
        assert obj["kind"] == "CustomResourceDefinition" or obj["metadata"]["namespace"] == "reviewer"
    ingress = _one(objects, "Ingress", "reviewer")
    assert ingress["spec"]["rules"][0]["host"] == ingress["spec"]["tls"][0]["hosts"][0] == "reviewer.internal.example"
    config = _settings(objects)
    assert config["data"]["REVIEWER_PUBLIC_URL"] == "https://reviewer.internal.example"
    assert config["data"]["REVIEWER_SECRETS_DIR"] == "/etc/reviewer/secrets"  # merged, not replaced
    for name in ("reviewer-web", "reviewer-worker"):
        [container] = _pod(objects, name)["containers"]
        assert container["image"] == "registry.example.com/reviewer:0.1.0"
        assert container["envFrom"] == [{"configMapRef": {"name": config["metadata"]["name"]}}]


def test_the_admin_token_and_the_admin_file_reach_the_pods(rendered):
    """A first sign-in needs the break-glass token (web, from a Secret); a review needs the admin file
    (web and worker, a ConfigMap mounted as a directory, so the kubelet's updates are seen) and the
    model key it references (a Secret mounted in the store)."""
    settings = _settings(rendered)["data"]
    admin_path = PurePosixPath(settings["REVIEWER_ADMIN_CONFIG"])
    [admin_map] = [o for o in rendered if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("reviewer-admin")]
    admin, problems = load_admin_config(admin_map["data"][admin_path.name], admin_path.name)
    assert admin is not None and problems == [] and admin.providers  # a provider: reviews are not plan-only
    assert admin_map["data"][admin_path.name] == (BASE / "admin.yaml").read_text()
    for name in ("reviewer-web", "reviewer-worker"):
        pod = _pod(rendered, name)
        [container] = pod["containers"]
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        [admin_volume] = [n for n, v in volumes.items() if v.get("configMap", {}).get("name") == admin_map["metadata"]["name"]]
        assert mounts[admin_volume]["mountPath"] == str(admin_path.parent) and "subPath" not in mounts[admin_volume]
        for secret in admin.secret_names:  # each secret:// the admin file names, mounted in the store
            [volume] = [n for n, v in volumes.items() if v.get("secret", {}).get("secretName") == secret]
            assert mounts[volume]["mountPath"] == f"{settings['REVIEWER_SECRETS_DIR']}/{secret}"
        tokens = [e for e in container.get("env", []) if e["name"] == "REVIEWER_ADMIN_TOKEN"]
        if name == "reviewer-web":
            assert tokens == [{"name": "REVIEWER_ADMIN_TOKEN",
                               "valueFrom": {"secretKeyRef": {"name": "reviewer-admin-token", "key": "token"}}}]
        else:
            assert tokens == []  # a worker serves no API and no console
    assert "REVIEWER_ADMIN_TOKEN" not in settings  # a ConfigMap holds no secret


def test_an_overlay_replaces_the_admin_file(tmp_path):
    (tmp_path / "admin.yaml").write_text("providers:\n  local: {type: openai, baseUrl: 'http://vllm:8000/v1'}\n"
                                         "defaults:\n  models: {review: local/qwen}\n")
    (tmp_path / "kustomization.yaml").write_text(
        f"resources: [{os.path.relpath(BASE, tmp_path)}]\n"
        "configMapGenerator:\n  - {name: reviewer-admin, behavior: replace, files: [admin.yaml]}\n")
    result = subprocess.run([_kubectl(), "kustomize", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    objects = [doc for doc in YAML(typ="safe").load_all(result.stdout) if doc]
    [admin_map] = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("reviewer-admin")]
    assert "http://vllm:8000/v1" in admin_map["data"]["admin.yaml"]
    volume = next(v for v in _pod(objects, "reviewer-worker")["volumes"] if "configMap" in v)
    assert volume["configMap"]["name"] == admin_map["metadata"]["name"]  # the pods follow the new file

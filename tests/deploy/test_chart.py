"""The Helm chart charts/steward: it lints, renders valid Kubernetes 1.30 manifests with the default and
with the full values (ci/full-values.yaml), and renders what the deployment needs: two locked-down
Deployments with the right probes, secrets only where they are used, the App key as a file, and
scaling on Steward's queue."""

from __future__ import annotations

import base64
import shutil
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from bot.config.settings import Settings
from bot.queue.jobs import QUEUE_NAME

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "steward"
FULL = CHART / "ci" / "full-values.yaml"
KUBERNETES = "1.30"

Manifests = list[dict[str, Any]]
Render = Callable[..., Manifests]

# Value sets every structural test runs on: the defaults, the full values, and the other branches.
VARIANTS: dict[str, tuple[str, ...]] = {
    "default": (),
    "full": ("-f", str(FULL)),
    "secrets": (
        "--set",
        "secrets.githubToken=ghp_token,secrets.giteaToken=gitea-token,gitea.url=https://gitea.example.com",
        "--set",
        "secrets.githubWebhookSecrets={new-secret,old-secret},secrets.giteaWebhookSecrets={gitea-secret}",
        "--set-string",
        "secrets.signingKey=-----BEGIN PRIVATE KEY-----,secrets.verifyKeys={-----BEGIN PUBLIC KEY-----}",
        "--set-string",
        "config.signingSince=2026-01-01T00:00:00Z",
    ),
    "app": ("--set", "github.appId=42", "--set-string", "secrets.githubAppPrivateKey=-----BEGIN KEY-----"),
    "hpa": ("--set", "worker.autoscaling.enabled=true"),
    "no-metrics": ("--set", "worker.metrics.enabled=false,receiver.preStopSleepSeconds=0"),
}


def _run(helm: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm, *args], capture_output=True, text=True, timeout=120, check=False)


@cache
def _template(helm: str, *args: str) -> str:
    done = _run(helm, "template", "steward-test", str(CHART), "--namespace", "bots", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="session")
def render(helm: str) -> Render:
    def rendered(*args: str) -> Manifests:
        return [doc for doc in yaml.safe_load_all(_template(helm, *args)) if doc]

    return rendered


def _one(manifests: Manifests, kind: str, component: str | None = None) -> dict[str, Any]:
    found = [
        m
        for m in manifests
        if m["kind"] == kind
        and (component is None or m["metadata"]["labels"].get("app.kubernetes.io/component") == component)
    ]
    assert len(found) == 1, f"{len(found)} {kind} ({component}) rendered"
    return found[0]


def _kinds(manifests: Manifests) -> list[str]:
    return sorted(m["kind"] for m in manifests)


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return dict(containers[0])


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


def _fails(helm: str, *args: str) -> str:
    done = _run(helm, "template", "steward-test", str(CHART), *args)
    assert done.returncode != 0, f"helm template accepted {args}"
    return done.stderr


# --- lint and Kubernetes schemas ------------------------------------------------------------------


@pytest.mark.parametrize("values", [(), ("-f", str(FULL))], ids=["default", "full"])
def test_the_chart_lints_cleanly(helm: str, values: tuple[str, ...]) -> None:
    done = _run(helm, "lint", "--strict", str(CHART), *values)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 chart(s) failed" in done.stdout


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_rendered_manifest_is_valid_kubernetes(render: Render, variant: str) -> None:
    manifests = render(*VARIANTS[variant])
    assert manifests
    for manifest in manifests:
        if manifest["apiVersion"].startswith(("keda.sh/", "monitoring.coreos.com/")):
            continue  # a CRD: no schema ships for it; test_keda_* and test_monitoring_* check its shape
        try:
            kubernetes_validate.validate(manifest, KUBERNETES, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = "/".join(str(p) for p in error.path)
            pytest.fail(f"{manifest['kind']} {manifest['metadata']['name']}: {path}: {error.message}")


def test_the_default_install_renders_what_it_needs_and_nothing_optional(render: Render) -> None:
    assert _kinds(render()) == [
        "ConfigMap",
        "Deployment",
        "Deployment",
        "PodDisruptionBudget",
        "PodDisruptionBudget",
        "Secret",
        "Service",
        "Service",
        "ServiceAccount",
    ]


def test_the_full_values_render_every_optional_part(render: Render) -> None:
    kinds = _kinds(render("-f", str(FULL)))
    assert {"Ingress", "ScaledObject", "ServiceMonitor", "NetworkPolicy"} <= set(kinds)
    assert "TriggerAuthentication" not in kinds  # KEDA reads the receiver, not Redis
    assert "Secret" not in kinds  # existingSecret
    assert "HorizontalPodAutoscaler" not in kinds  # KEDA makes its own


# --- the two components ---------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_receiver_and_worker_are_separate_deployments(render: Render, variant: str) -> None:
    manifests = render(*VARIANTS[variant])
    receiver = _one(manifests, "Deployment", "receiver")
    worker = _one(manifests, "Deployment", "worker")
    assert _container(receiver)["args"] == ["serve"]
    assert _container(worker)["args"] == ["worker"]
    for deployment in (receiver, worker):
        selector = deployment["spec"]["selector"]["matchLabels"]
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert selector.items() <= labels.items()
    assert receiver["spec"]["selector"] != worker["spec"]["selector"]
    service = _one(manifests, "Service", "receiver")
    assert service["spec"]["selector"] == receiver["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] == "http"


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_component_has_its_own_disruption_budget(render: Render, variant: str) -> None:
    manifests = render(*VARIANTS[variant])
    for component in ("receiver", "worker"):
        budget = _one(manifests, "PodDisruptionBudget", component)
        deployment = _one(manifests, "Deployment", component)
        assert budget["spec"]["selector"] == deployment["spec"]["selector"]
        assert budget["spec"]["maxUnavailable"] == 1


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_container_is_locked_down(render: Render, variant: str) -> None:
    for deployment in (m for m in render(*VARIANTS[variant]) if m["kind"] == "Deployment"):
        pod = deployment["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == 10001
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["automountServiceAccountToken"] is False
        for container in pod["containers"] + pod.get("initContainers", []):
            context = container["securityContext"]
            assert context["runAsNonRoot"] is True
            assert context["runAsUser"] == 10001
            assert context["readOnlyRootFilesystem"] is True
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"] == {"drop": ["ALL"]}
            assert context["seccompProfile"] == {"type": "RuntimeDefault"}
            # The read-only root needs a writable /tmp.
            tmp = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
            assert len(tmp) == 1
            volume = next(v for v in pod["volumes"] if v["name"] == tmp[0]["name"])
            assert "emptyDir" in volume


def test_the_receiver_is_probed_on_healthz_and_readyz(render: Render) -> None:
    container = _container(_one(render(), "Deployment", "receiver"))
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    env = _env(container)
    assert env["STEWARD_HOST"]["value"] == "0.0.0.0"
    assert env["STEWARD_PORT"]["value"] == "8000"


def test_a_worker_with_metrics_is_probed_on_its_metrics_port(render: Render) -> None:
    container = _container(_one(render(), "Deployment", "worker"))
    assert _env(container)["STEWARD_WORKER_METRICS_PORT"]["value"] == "9100"
    assert container["ports"] == [{"name": "metrics", "containerPort": 9100, "protocol": "TCP"}]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}


def test_a_worker_without_metrics_is_ready_when_redis_answers(render: Render) -> None:
    container = _container(_one(render(*VARIANTS["no-metrics"]), "Deployment", "worker"))
    assert "STEWARD_WORKER_METRICS_PORT" not in _env(container)
    assert "ports" not in container
    assert "livenessProbe" not in container
    command = container["readinessProbe"]["exec"]["command"]
    assert command == ["python", "/opt/steward/healthcheck.py", "worker", "--ready"]
    # The image ships the script at that path.
    assert (
        "COPY deploy/docker/healthcheck.py /opt/steward/healthcheck.py" in (ROOT / "Dockerfile").read_text()
    )


def test_stopping_leaves_time_to_drain(render: Render) -> None:
    manifests = render()
    receiver = _one(manifests, "Deployment", "receiver")["spec"]["template"]["spec"]
    worker = _one(manifests, "Deployment", "worker")["spec"]["template"]["spec"]
    sleep = int(receiver["containers"][0]["lifecycle"]["preStop"]["exec"]["command"][1])
    assert receiver["terminationGracePeriodSeconds"] >= sleep + 20
    assert worker["terminationGracePeriodSeconds"] > 20


# --- configuration and secrets --------------------------------------------------------------------


def _settings_variables() -> set[str]:
    return {f"STEWARD_{name.upper()}" for name in Settings.model_fields}


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variable_the_chart_sets_is_a_steward_setting(render: Render, variant: str) -> None:
    manifests = render(*VARIANTS[variant])
    known = _settings_variables()
    config = _one(manifests, "ConfigMap")["data"]
    extra = {"STEWARD_SOMETHING_NEW"}  # config.extra in the full values: passed through verbatim
    assert set(config) - extra <= known
    for deployment in (m for m in manifests if m["kind"] == "Deployment"):
        names = set(_env(_container(deployment))) - {"TZ"}
        assert names <= known, names - known


def test_the_defaults_configure_redis_and_json_logs_and_leave_the_rest_to_steward(render: Render) -> None:
    assert _one(render(), "ConfigMap")["data"] == {
        "STEWARD_REDIS_URL": "redis://redis:6379/0",
        "STEWARD_LOG_LEVEL": "info",
        "STEWARD_LOG_FORMAT": "json",
    }


def test_settings_reach_the_configmap_as_steward_parses_them(render: Render) -> None:
    data = _one(render("-f", str(FULL)), "ConfigMap")["data"]
    assert "STEWARD_REDIS_URL" not in data  # it comes from redis.existingSecret
    del data["STEWARD_SOMETHING_NEW"]
    settings = Settings(**{k.removeprefix("STEWARD_").lower(): v for k, v in data.items()})
    assert settings.max_jobs == 20
    assert settings.retry_base_delay == 0.25
    assert settings.github_app_id == "123456"
    assert settings.gitea_url == "https://gitea.example.com"
    assert settings.log_format == "json"


def _decoded(secret: dict[str, Any]) -> dict[str, str]:
    return {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}


def test_the_chart_secret_holds_the_values_under_the_documented_keys(render: Render) -> None:
    secret = _one(render(*VARIANTS["secrets"]), "Secret")
    assert _decoded(secret) == {
        "github-token": "ghp_token",
        "github-webhook-secrets": "new-secret,old-secret",
        "gitea-token": "gitea-token",
        "gitea-webhook-secrets": "gitea-secret",
        "signing-key": "-----BEGIN PRIVATE KEY-----",
        "verify-keys": "-----BEGIN PUBLIC KEY-----",
    }


def test_each_component_gets_only_the_secrets_it_uses(render: Render) -> None:
    manifests = render(*VARIANTS["secrets"])
    secret = _one(manifests, "Secret")["metadata"]["name"]

    def refs(component: str) -> dict[str, str]:
        env = _env(_container(_one(manifests, "Deployment", component)))
        return {
            name: e["valueFrom"]["secretKeyRef"]["key"]
            for name, e in env.items()
            if "valueFrom" in e and e["valueFrom"]["secretKeyRef"]["name"] == secret
        }

    assert refs("receiver") == {
        "STEWARD_GITHUB_WEBHOOK_SECRETS": "github-webhook-secrets",
        "STEWARD_GITEA_WEBHOOK_SECRETS": "gitea-webhook-secrets",
    }
    # Issue 40 item 2: the signing key is an operator's secret, given to the workers only (never the
    # receiver, which faces the internet).
    assert refs("worker") == {
        "STEWARD_GITHUB_TOKEN": "github-token",
        "STEWARD_GITEA_TOKEN": "gitea-token",
        "STEWARD_SIGNING_KEY": "signing-key",
        "STEWARD_VERIFY_KEYS": "verify-keys",
    }
    [config] = [m for m in manifests if m["kind"] == "ConfigMap"]
    assert config["data"]["STEWARD_SIGNING_SINCE"] == "2026-01-01T00:00:00Z"


def test_an_existing_secret_replaces_the_charts_secret(render: Render) -> None:
    manifests = render("--set", "secrets.existingSecret=mine")
    assert "Secret" not in _kinds(manifests)
    for component in ("receiver", "worker"):
        deployment = _one(manifests, "Deployment", component)
        assert "checksum/secret" not in deployment["spec"]["template"]["metadata"]["annotations"]
        refs = [
            e["valueFrom"]["secretKeyRef"] for e in _env(_container(deployment)).values() if "valueFrom" in e
        ]
        assert refs and all(ref["name"] == "mine" for ref in refs)


def test_a_redis_url_from_a_secret_replaces_the_configmaps(render: Render) -> None:
    manifests = render("-f", str(FULL))
    for component in ("receiver", "worker"):
        env = _env(_container(_one(manifests, "Deployment", component)))
        assert env["STEWARD_REDIS_URL"]["valueFrom"]["secretKeyRef"] == {
            "name": "steward-redis",
            "key": "url",
        }


@pytest.mark.parametrize("variant", ["app", "full"])
def test_the_github_app_key_is_mounted_as_a_file_in_the_workers_only(render: Render, variant: str) -> None:
    manifests = render(*VARIANTS[variant])
    worker = _one(manifests, "Deployment", "worker")
    container = _container(worker)
    path = Path(_env(container)["STEWARD_GITHUB_PRIVATE_KEY_PATH"]["value"])
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == str(path.parent))
    assert mount["readOnly"] is True
    volume = next(v for v in worker["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"])
    expected = "steward-credentials" if variant == "full" else "steward-test"
    assert volume["secret"]["secretName"] == expected
    assert volume["secret"]["items"] == [{"key": "github-app-private-key", "path": path.name}]
    assert volume["secret"]["defaultMode"] == 0o440
    if variant == "app":
        assert _decoded(_one(manifests, "Secret"))["github-app-private-key"] == "-----BEGIN KEY-----"
    receiver = _container(_one(manifests, "Deployment", "receiver"))
    assert "STEWARD_GITHUB_PRIVATE_KEY_PATH" not in _env(receiver)
    assert [m["mountPath"] for m in receiver["volumeMounts"]] == ["/tmp"]


def test_the_state_file_lives_on_the_named_claim_in_the_workers_only(render: Render) -> None:
    """docs/operations.md "Losing Redis": the workers' state file outlives Redis and the pods."""
    assert "STEWARD_STATE_FILE" not in _env(_container(_one(render(), "Deployment", "worker")))
    manifests = render("--set", "stateVolume.existingClaim=steward-state")
    worker = _one(manifests, "Deployment", "worker")
    container = _container(worker)
    path = Path(_env(container)["STEWARD_STATE_FILE"]["value"])
    assert path == Path("/var/lib/steward/state.json")
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == str(path.parent))
    volume = next(v for v in worker["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"])
    assert volume["persistentVolumeClaim"] == {"claimName": "steward-state"}
    assert "STEWARD_STATE_FILE" not in _env(_container(_one(manifests, "Deployment", "receiver")))


def test_a_rotated_existing_secret_rolls_the_pods_when_its_version_changes(render: Render) -> None:
    """docs/deploy.md "Rotating a secret": Kubernetes restarts nothing when a Secret changes."""

    def checksum(version: str) -> str | None:
        manifests = render(
            "--set", "secrets.existingSecret=mine", "--set-string", f"secrets.existingSecretVersion={version}"
        )
        worker = _one(manifests, "Deployment", "worker")
        return worker["spec"]["template"]["metadata"]["annotations"].get("checksum/secret")

    assert checksum("") is None
    assert checksum("2026-12-01") and checksum("2026-12-01") != checksum("2026-12-02")


def test_a_config_change_rolls_the_pods(render: Render) -> None:
    def checksums(*args: str) -> dict[str, str]:
        pod = _one(render(*args), "Deployment", "worker")["spec"]["template"]
        annotations = pod["metadata"]["annotations"]
        return {k: v for k, v in annotations.items() if k.startswith("checksum/")}

    assert checksums() != checksums("--set", "config.logLevel=debug")
    assert checksums()["checksum/secret"] != checksums(*VARIANTS["secrets"])["checksum/secret"]


# --- ingress and NOTES ----------------------------------------------------------------------------


def test_the_ingress_routes_only_the_webhooks_to_the_receiver(render: Render) -> None:
    manifests = render("-f", str(FULL))
    ingress = _one(manifests, "Ingress")
    service = _one(manifests, "Service", "receiver")
    assert [rule["host"] for rule in ingress["spec"]["rules"]] == ["steward.example.com", "hooks.example.org"]
    for rule in ingress["spec"]["rules"]:
        (path,) = rule["http"]["paths"]
        assert (path["path"], path["pathType"]) == ("/webhooks", "Prefix")
        backend = path["backend"]["service"]
        assert backend == {"name": service["metadata"]["name"], "port": {"number": 8080}}
    assert ingress["spec"]["ingressClassName"] == "nginx"


def _notes(helm: str, tmp_path: Path, *args: str) -> str:
    """NOTES.txt as `helm install` prints it (helm template leaves it out; install needs a cluster)."""
    chart = tmp_path / "steward"
    shutil.copytree(CHART, chart)
    shutil.copy(CHART / "templates" / "NOTES.txt", chart / "notes.txt")
    (chart / "templates" / "zz-notes.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: |\n"
        '{{ tpl (.Files.Get "notes.txt") . | indent 4 }}\n'
    )
    done = _run(
        helm, "template", "steward-test", str(chart), "--namespace", "bots",
        "--show-only", "templates/zz-notes.yaml", *args,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return str(yaml.safe_load(done.stdout)["data"]["notes"])


def test_the_notes_print_the_webhook_urls_of_the_ingress(helm: str, tmp_path: Path) -> None:
    notes = _notes(helm, tmp_path, "-f", str(FULL))
    assert "https://steward.example.com/webhooks/github" in notes
    assert "https://steward.example.com/webhooks/gitea" in notes
    assert "http://hooks.example.org/webhooks/github" in notes  # no TLS for that host
    assert "WARNING" not in notes


def test_without_an_ingress_the_notes_say_how_to_reach_the_receiver(helm: str, tmp_path: Path) -> None:
    notes = _notes(helm, tmp_path)
    assert "kubectl --namespace bots port-forward svc/steward-test-receiver 8000:80" in notes
    assert "http://127.0.0.1:8000/webhooks/github" in notes
    assert "no webhook secret is set" in notes
    assert "no forge credentials are set" in notes
    assert "appendonly yes" in notes


# --- scaling the workers --------------------------------------------------------------------------


def test_keda_scales_the_workers_on_the_ready_jobs_the_receiver_reports(render: Render) -> None:
    """Issue 26: scaling on every queue entry counted deferred jobs (held back by the shared write budget),
    adding workers that cannot write faster. KEDA's metrics-api scaler reads `ready` from GET /queue."""
    manifests = render("-f", str(FULL))
    worker = _one(manifests, "Deployment", "worker")
    receiver = _one(manifests, "Service", "receiver")
    scaled = _one(manifests, "ScaledObject")
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    assert "replicas" not in worker["spec"]  # KEDA's HPA owns it
    spec = scaled["spec"]
    assert spec["scaleTargetRef"] == {"name": worker["metadata"]["name"]}
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (2, 20)
    assert isinstance(spec["pollingInterval"], int) and isinstance(spec["cooldownPeriod"], int)
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "metrics-api"
    assert trigger["metadata"] == {
        "url": f"http://{receiver['metadata']['name']}.bots.svc:8080/queue",
        "format": "json",
        "valueLocation": "ready",
        "targetValue": "20",
    }
    assert "authenticationRef" not in trigger


def test_the_receiver_serves_the_queue_keda_reads(redis_url: str) -> None:
    """GET /queue answers what the ScaledObject reads: `ready` apart from `deferred`."""
    import asyncio
    import time as clock

    import httpx2

    from bot.demo.threads import ThreadedServer
    from bot.queue.jobs import make_redis
    from bot.receiver.app import create_app

    async def queue_two() -> None:
        redis = make_redis(redis_url)
        await redis.enqueue_job("process_event", "{}", _job_id="ready-1", _queue_name=QUEUE_NAME)
        await redis.enqueue_job(
            "process_event", "{}", _job_id="later-1", _queue_name=QUEUE_NAME, _defer_by=600
        )
        await redis.aclose()

    asyncio.run(queue_two())
    server = ThreadedServer(create_app(Settings(redis_url=redis_url, reconcile_on_start=False))).start()
    try:
        started = clock.time()
        answer = httpx2.get(f"{server.url}/queue", timeout=10).json()
    finally:
        server.stop()
    assert answer["ready"] == 1 and answer["deferred"] == 1
    assert 0 <= answer["oldest_ready_seconds"] <= clock.time() - started + 60


@pytest.mark.parametrize(
    ("args", "limit"),
    [
        ((), "378Mi"),  # 128 + 2 x 25 MiB x 5
        (("--set", "config.maxBodyBytes=10485760,config.maxLargeBodies=4"), "328Mi"),
        (("--set", "receiver.resources.limits.memory=1Gi"), "1Gi"),
    ],
)
def test_the_receivers_memory_limit_follows_the_body_limit(
    render: Render, args: tuple[str, ...], limit: str
) -> None:
    """Issue 26: 256Mi was below what four concurrent 20 MiB deliveries need (470 MB); the limit is now
    derived from the body limit and how many large bodies a receiver reads at once, which it enforces."""
    receiver = _one(render(*args), "Deployment", "receiver")
    assert _container(receiver)["resources"]["limits"]["memory"] == limit


@pytest.mark.parametrize(
    ("args", "limit"),
    [
        ((), "2192Mi"),
        (("--set", "config.maxBodyBytes=1048576", "--set", "config.maxJobs=4"), "224Mi"),
        (("--set", "worker.resources.limits.memory=2Gi"), "2Gi"),
    ],
    ids=["defaults", "smaller", "explicit"],
)
def test_the_workers_memory_limit_follows_the_body_limit_and_the_jobs_at_once(
    render: Render, args: tuple[str, ...], limit: str
) -> None:
    """Issue 40 item 5: a fixed 512Mi against ten 24 MiB Gitea deliveries in flight (3.7 GiB) meant an OOM
    kill, a strand, a re-claim, another OOM. Queued events now keep at most 256 KiB of each text, and the
    limit is derived from what a worker may read whole at once, at the 7.9 copies of each body
    bench/worker_memory.py measured (docs/deploy.md)."""
    worker = _one(render(*args), "Deployment", "worker")
    assert _container(worker)["resources"]["limits"]["memory"] == limit


def test_monitoring_scrapes_both_components_and_the_workers_have_a_metrics_service(render: Render) -> None:
    manifests = render("-f", str(FULL))
    monitors = {
        m["metadata"]["labels"]["app.kubernetes.io/component"]: m
        for m in manifests
        if m["kind"] == "ServiceMonitor"
    }
    assert set(monitors) == {"receiver", "worker"}
    assert monitors["receiver"]["spec"]["endpoints"] == [
        {"port": "http", "path": "/metrics", "interval": "15s"}
    ]
    assert monitors["worker"]["spec"]["endpoints"][0]["port"] == "metrics"
    assert monitors["worker"]["metadata"]["labels"]["release"] == "prometheus"
    service = _one(manifests, "Service", "worker")
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 9100, "targetPort": "metrics", "protocol": "TCP"}
    ]
    assert "Service" not in [
        m["kind"]
        for m in render(*VARIANTS["no-metrics"])
        if m["metadata"]["labels"].get("app.kubernetes.io/component") == "worker"
    ]


def test_the_network_policy_admits_the_receiver_port_and_the_metrics_port_only(render: Render) -> None:
    manifests = render("-f", str(FULL))
    receiver = _one(manifests, "NetworkPolicy", "receiver")
    worker = _one(manifests, "NetworkPolicy", "worker")
    assert receiver["spec"]["ingress"] == [{"ports": [{"port": "http", "protocol": "TCP"}]}]
    (rule,) = worker["spec"]["ingress"]
    assert rule["ports"] == [{"port": "metrics", "protocol": "TCP"}]
    assert rule["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
    ]
    assert "NetworkPolicy" not in _kinds(render())


def test_the_notes_and_values_say_what_redis_must_be(helm: str, tmp_path: Path) -> None:
    values = (CHART / "values.yaml").read_text()
    notes = " ".join(_notes(helm, tmp_path).split())
    for text in (values, notes):
        assert "appendonly yes" in text and "noeviction" in text and "Redis Cluster" in text


def test_the_cpu_autoscaler_targets_the_workers(render: Render) -> None:
    manifests = render(*VARIANTS["hpa"])
    worker = _one(manifests, "Deployment", "worker")
    hpa = _one(manifests, "HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "steward-test-worker",
    }
    assert worker["metadata"]["name"] == "steward-test-worker"
    assert "replicas" not in worker["spec"]
    assert hpa["spec"]["minReplicas"] >= 1


# --- values the chart refuses ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (("--set", "worker.replicas=two"), "worker.replicas"),
        (("--set-string", "receiver.port=8000"), "receiver.port"),
        (("--set", "config.logFormat=xml"), "config.logFormat"),
        (("--set", "replicas=3"), "replicas"),
        (("--set", "receiver.ingress.enabled=true"), "receiver.ingress.hosts"),
        (("--set", "worker.keda.minReplicas=0"), "worker.keda.minReplicas"),
        (("--set-string", "secrets.githubWebhookSecrets[0]=x\\,y"), "secrets.githubWebhookSecrets.0"),
        (("--set", "redis.url=http://redis:6379"), "redis.url"),
    ],
)
def test_the_schema_rejects_a_wrong_value(helm: str, args: tuple[str, ...], complaint: str) -> None:
    assert complaint in _fails(helm, *args)
    lint = _run(helm, "lint", str(CHART), *args)
    assert lint.returncode != 0


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (("--set", "github.appId=1"), "secrets.githubAppPrivateKey"),
        (("--set", "worker.keda.enabled=true,worker.autoscaling.enabled=true"), "choose one"),
        (("--set", "redis.url=redis://:hunter2@redis:6379/0"), "redis.existingSecret"),
        (("--set", "redis.url="), "redis.url"),
    ],
)
def test_combinations_that_cannot_work_are_refused_with_the_fix(
    helm: str, args: tuple[str, ...], complaint: str
) -> None:
    assert complaint in _fails(helm, *args)

"""Images that cannot be pulled: the kubelet's waiting reasons and the runtime's pull errors.

=====================  =================  ==============================================================
rule                   code               fields
=====================  =================  ==============================================================
image.pull_error       image.pull_failed  image, problem, registry, ecr_region, ecr_repository, tag
image.waiting_reason   image.pull_failed  reason, image, problem, registry, ecr_region, ecr_repository, tag
image.pull_secret      image.pull_failed  secret, problem (unauthorized)
=====================  =================  ==============================================================

``problem`` says what the registry or the node answered: ``not_found`` (tag or repository missing),
``unauthorized`` (401 / 403, ``pull access denied``, an expired ECR token, no credentials), ``rate_limited``
(``toomanyrequests``, 429), ``network`` (no route, DNS, TLS, timeouts to the registry), ``invalid_name``,
``never_pull`` (imagePullPolicy: Never and the image is not on the node) and ``disk_full`` (the node's disk
filled while unpacking layers; storage.py reads the same line as storage.disk_full). ``image`` is kept only
when it is a valid image reference (playbooks/fix_values.py ``is_image_reference``), so no other text
reaches a fix; ``ecr_region`` / ``ecr_repository`` / ``tag`` are split from an ECR image for ``aws ecr``.

Sources:
- kubernetes/kubernetes pkg/kubelet/images/types.go: the waiting reasons ``ErrImagePull``,
  ``ImagePullBackOff``, ``InvalidImageName``, ``ErrImageNeverPull``, ``RegistryUnavailable``.
- pkg/kubelet/images/image_manager.go ``EnsureImageExists``: ``Failed to pull image %q: %v`` (Warning
  Failed), ``Back-off pulling image %q`` (Normal BackOff; from 1.30 the waiting message appends the previous
  pull error), ``Container image %q is not present with pull policy of Never``, ``Failed to apply default
  image tag %q: couldn't parse image reference %q``, ``image pull failed for %s because the registry is
  unavailable``; pkg/kubelet/kuberuntime/kuberuntime_container.go ``startContainer`` records ``Error: %v``
  with the reason (``Error: ErrImagePull``, ``Error: ImagePullBackOff``).
- pkg/kubelet/kubelet_pods.go ``getPullSecretsForPod``: ``Unable to retrieve some image pull secrets
  (%s); attempting to pull the image may not succeed.``
- containerd internal/cri/server/images/image_pull.go and core/remotes/docker/resolver.go, quoted inside
  those events: ``failed to pull and unpack image``, ``failed to resolve reference %q: %s: not found``,
  ``pull access denied, repository does not exist or may require authorization``, ``unexpected status
  from HEAD request to %s: 401 Unauthorized`` / ``403 Forbidden``, ``429 Too Many Requests`` with the
  registry's ``toomanyrequests``; Go net ``dial tcp ...: i/o timeout``, ``no such host``; Docker's
  ``no basic auth credentials``; Amazon ECR ``Your authorization token has expired``.

A pull that succeeds after a back-off is still a finding (the lines here are read one at a time): the
kubelet backs off only after a failed pull (``backOff.Next``), so the failure happened and delayed the
pod by at least the back-off; rate limits and expiring tokens recur on each new node.
"""
from __future__ import annotations

from playbooks import linear
from playbooks.fix_values import is_image_reference
from playbooks.signatures.model import Rule, Verdict

# What the registry or the node said, most specific first: a 429 line also says "failed to resolve".
_PROBLEMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("invalid_name", ("InvalidImageName", "couldn't parse image reference", "invalid reference format",
                      "Failed to apply default image tag")),
    ("never_pull", ("ErrImageNeverPull", "is not present with pull policy of Never")),
    ("disk_full", ("no space left on device", "No space left on device")),
    ("rate_limited", ("toomanyrequests", "429 Too Many Requests", "pull rate limit")),
    ("unauthorized", ("401 Unauthorized", "403 Forbidden", "pull access denied", "no basic auth credentials",
                      "authorization token has expired", "failed to authorize", "insufficient_scope",
                      "not authorized to perform", "unauthorized: ", "denied: User:",
                      "requested access to the resource is denied", "Unable to retrieve some image pull secrets")),
    ("not_found", (": not found", "manifest unknown", "not found: manifest", "repository does not exist",
                   "name unknown")),
    ("network", ("i/o timeout", "dial tcp", "no such host", "connection refused", "TLS handshake timeout",
                 "context deadline exceeded", "network is unreachable", "connection reset by peer",
                 "x509: certificate", "registry is unavailable", "RegistryUnavailable")),
)

_TITLES = {
    "invalid_name": "Image reference[ {image}] is not valid (InvalidImageName)",
    "never_pull": "Image[ {image}] is not on the node and imagePullPolicy is Never",
    "disk_full": "Pulling image[ {image}] failed: the node's disk is full",
    "rate_limited": "Registry rate-limited the pull of image[ {image}] (toomanyrequests)",
    "unauthorized": "Registry refused to serve image[ {image}]: credentials missing, expired or without access",
    "not_found": "Image[ {image}] not found in its registry: wrong tag or repository",
    "network": "Node cannot reach the registry of image[ {image}] (network, DNS or TLS)",
}

_IMAGE = r"\\?\"(?P<image>[^\"\\\s]{1,512})\\?\""
_ECR = linear.compile(r"^(?P<registry>\d{12}\.dkr\.ecr(?:-fips)?\.(?P<ecr_region>[a-z0-9-]{1,30})\.amazonaws\.com(?:\.cn)?)/"
                      r"(?P<ecr_repository>[^:@]{1,256})(?::(?P<tag>[\w][\w.-]{0,127}))?")


def pull_problem(text: str) -> str | None:
    for problem, markers in _PROBLEMS:
        for marker in markers:
            if marker in text:
                return problem
    return None


def _image_fields(fields: dict[str, str]) -> dict[str, str]:
    """Drop an image that is no image reference; split an ECR image for ``aws ecr`` commands."""
    image = fields.get("image", "")
    if not image:
        return {}
    if not is_image_reference(image):
        del fields["image"]
        return {}
    found = _ECR.match(image)
    if found:
        return {k: v for k, v in found.groupdict().items() if v}
    return {"registry": registry_of(image)}


def registry_of(image: str) -> str:
    """The registry host, as distribution/reference normalize.go splitDockerDomain decides it: the first
    component when it has a dot or a port or is localhost, Docker Hub otherwise."""
    first, slash, _ = image.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def _judge(fields: dict[str, str], text: str, *, default_title: str, detailed: bool) -> Verdict:
    extra = _image_fields(fields)
    problem = pull_problem(text)
    if problem:
        extra["problem"] = problem
    title = _TITLES.get(problem or "", default_title)
    if problem == "unauthorized" and "repository does not exist" in text:
        # Docker Hub and containerd say this for a private repository and for one that does not exist alike.
        title = "Registry denied the pull of image[ {image}]: the repository does not exist or needs credentials"
    confidence = "high" if detailed and (problem or "image" in fields) else "medium"
    return Verdict(title=title, confidence=confidence, fields=extra)


def _pull_error(fields: dict[str, str], text: str) -> Verdict:
    return _judge(fields, text, default_title="Image[ {image}] cannot be pulled", detailed=True)


def _waiting(fields: dict[str, str], text: str) -> Verdict:
    fields.setdefault("reason", "ImagePullBackOff")  # "Back-off pulling image" is the BackOff event
    return _judge(fields, text, default_title="Container waiting: {reason} (image[ {image}] cannot be pulled)",
                  detailed=False)


RULES: tuple[Rule, ...] = (
    Rule(
        name="image.pull_error",
        code="image.pull_failed",
        severity="error",
        confidence="high",
        title="Image[ {image}] cannot be pulled",
        keywords=("Failed to pull image", "failed to pull and unpack image", "PullImage from image service failed",
                  "Failed to apply default image tag", "is not present with pull policy of Never",
                  "because the registry is unavailable", "toomanyrequests: You have reached your pull rate limit",
                  "no basic auth credentials", "Your authorization token has expired"),
        extract=(
            linear.compile(r"(?:Failed to pull image|failed to pull and unpack image|default image tag|Container image|"
                           r"image pull failed for) " + _IMAGE),
            linear.compile(r"\bimage=" + _IMAGE),
            linear.compile(r"image pull failed for (?P<image>[^\s\"\\]{1,512}) because"),
        ),
        refine=_pull_error,
        fields_doc="image, problem (not_found, unauthorized, rate_limited, network, invalid_name, never_pull, "
                   "disk_full), registry, ecr_region, ecr_repository, tag",
        example='Warning  Failed  12s (x3 over 51s)  kubelet  Failed to pull image "nvcr.io/nvidia/pytorch:25.13-py3": '
                'rpc error: code = NotFound desc = failed to pull and unpack image "nvcr.io/nvidia/pytorch:25.13-py3": '
                'failed to resolve reference "nvcr.io/nvidia/pytorch:25.13-py3": nvcr.io/nvidia/pytorch:25.13-py3: not found',
    ),
    Rule(
        name="image.waiting_reason",
        code="image.pull_failed",
        severity="error",
        confidence="medium",
        title="Container waiting: {reason} (image cannot be pulled)",
        keywords=("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "Back-off pulling image"),
        pattern=linear.compile(r"\b(?P<reason>ErrImagePull|ImagePullBackOff|InvalidImageName|ErrImageNeverPull)\b|Back-off pulling image"),
        extract=(linear.compile(r"Back-off pulling image " + _IMAGE),),
        refine=_waiting,
        fields_doc="reason (ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull), image, problem, "
                   "registry, ecr_region, ecr_repository, tag",
        example="      Reason:       ImagePullBackOff",
    ),
    Rule(
        name="image.pull_secret",
        code="image.pull_failed",
        severity="warning",
        confidence="low",
        title="imagePullSecrets[ {secret}] not found: a private image will not be pulled",
        keywords=("Unable to retrieve some image pull secrets",),
        extract=(linear.compile(r"image pull secrets \((?P<secret>[a-z0-9][-a-z0-9.]{0,252})[,)]"),),
        refine=lambda f, t: Verdict(fields={"problem": "unauthorized"}),
        fields_doc="secret (the first missing one), problem (unauthorized)",
        example="Warning  FailedToRetrieveImagePullSecret  3s  kubelet  Unable to retrieve some image pull secrets "
                "(regcred); attempting to pull the image may not succeed.",
    ),
)

import time

import pytest
from kubernetes import client, config

from sim.cluster import Cluster
from sim.kubeconfig import write_kubeconfig
from sim.scale import add_synthetic, parse_scale
from sim.server import SimServer


def test_parse_scale():
    assert parse_scale("nodes=5000,pods=100000") == (5000, 100000)
    assert parse_scale(" pods=10 , nodes=2 ") == (2, 10)
    for bad in ("nodes=5000", "nodes=x,pods=1", "gpus=1,pods=1", "nodes=-1,pods=1", ""):
        with pytest.raises(ValueError, match="nodes=N,pods=M|integer|both|negative"):
            parse_scale(bad)


slow = pytest.mark.slow


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    cluster = Cluster()
    started = time.perf_counter()
    add_synthetic(cluster, nodes=5000, pods=100_000)
    elapsed = time.perf_counter() - started
    print(f"\nscale: generated 5000 nodes + 100000 pods in {elapsed:.2f}s")
    assert elapsed < 60
    server = SimServer(cluster).start()
    path = write_kubeconfig(tmp_path_factory.mktemp("kc") / "kubeconfig", server_url=server.url)
    api = config.new_client_from_config(config_file=str(path))
    yield cluster, client.CoreV1Api(api), client.CustomObjectsApi(api)
    api.close()
    server.stop()


@slow
def test_counts(big):
    cluster, _, _ = big
    kinds = {t.kind: cluster.count(t) for t in cluster.resource_types()}
    assert kinds["Node"] == 5000 and kinds["NodeClaim"] == 5000 and kinds["Pod"] == 100_000
    assert kinds["Event"] == 10_000 and kinds["NodePool"] == 2


@slow
def test_lists_stay_fast_over_http(big):
    _, core, custom = big
    started = time.perf_counter()
    page = core.list_pod_for_all_namespaces(limit=500)
    assert len(page.items) == 500 and page.metadata.remaining_item_count == 99_500
    job = core.list_pod_for_all_namespaces(label_selector="job-name=scale-job-42")
    assert len(job.items) == 8 and all(p.status.phase == "Running" for p in job.items)
    gpu_nodes = core.list_node(label_selector="karpenter.sh/nodepool=scale-gpu", limit=100)
    assert all(int(n.status.allocatable["nvidia.com/gpu"]) >= 4 for n in gpu_nodes.items)
    on_node = core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={job.items[0].spec.node_name}")
    assert on_node.items
    claims = custom.list_cluster_custom_object("karpenter.sh", "v1", "nodeclaims", limit=10)
    assert len(claims["items"]) == 10
    print(f"\nscale: five list calls took {time.perf_counter() - started:.2f}s")


@slow
def test_patch_copies_on_write(big):
    cluster, core, _ = big
    pods = cluster.resolve(group="", version="v1", plural="pods")
    first = core.list_namespaced_pod("scale-0", label_selector="job-name=scale-job-0").items
    core.patch_namespaced_pod_status(first[0].metadata.name, "scale-0", {"status": {"phase": "Failed"}},
                              _content_type="application/merge-patch+json")
    sibling = cluster.get(pods, namespace="scale-0", name=first[1].metadata.name)
    assert sibling["status"]["phase"] == "Running"  # shared status dict untouched
    assert cluster.get(pods, namespace="scale-0", name=first[0].metadata.name)["status"]["phase"] == "Failed"

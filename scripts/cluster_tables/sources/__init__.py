"""One module per upstream source of the cluster's vocabulary (contract: scripts/cluster_tables/common.py)."""

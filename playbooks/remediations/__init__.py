"""The changes gpubot may make to a cluster: typed proposals (``proposals``) and, per kind, a
definition of how the change is planned from the live object, applied, verified and undone."""
from playbooks.remediations.proposals import (
    DO_NOT_DISRUPT, POLICIES, WORKLOAD_KINDS, InvalidRemediation, annotate_do_not_disrupt, merge_patch,
    nodepool_consolidation, parse,
)

__all__ = ["DO_NOT_DISRUPT", "POLICIES", "WORKLOAD_KINDS", "InvalidRemediation", "annotate_do_not_disrupt",
           "merge_patch", "nodepool_consolidation", "parse"]

"""The changes gpubot may make to a cluster: typed proposals (``proposals``) and, per kind, a
definition of how the change is planned from the live object, applied, verified and undone
(``registry``)."""
from playbooks.remediations.model import (
    JSON_PATCH, MERGE_PATCH, Change, Definition, NothingToDo, ObjectRef, Permission, Plan, Reads, with_precondition,
)
from playbooks.remediations.proposals import (
    DO_NOT_DISRUPT, POLICIES, WORKLOAD_KINDS, InvalidRemediation, annotate_do_not_disrupt, cordon_gpu_node,
    merge_patch, nodepool_consolidation, parse,
)
from playbooks.remediations.registry import DEFINITIONS, definition, permissions, plan

__all__ = ["DEFINITIONS", "DO_NOT_DISRUPT", "JSON_PATCH", "MERGE_PATCH", "POLICIES", "WORKLOAD_KINDS", "Change",
           "Definition", "InvalidRemediation", "NothingToDo", "ObjectRef", "Permission", "Plan", "Reads",
           "annotate_do_not_disrupt", "cordon_gpu_node", "definition", "merge_patch", "nodepool_consolidation",
           "parse", "permissions", "plan", "with_precondition"]

"""Karpenter's messages, by family: scheduling errors per NodePool, NodeClaim lifecycle and launch
errors, disruption. Each family module cites the upstream files and versions its rules come from."""
from __future__ import annotations

from playbooks.signatures import karpenter_disruption, karpenter_nodeclaim, karpenter_nodeclass, karpenter_scheduling
from playbooks.signatures.karpenter_scheduling import SEGMENT_GATES, SEGMENT_RULES, scan_segments
from playbooks.signatures.model import Rule

LINE_RULES: tuple[Rule, ...] = (*karpenter_nodeclaim.RULES, *karpenter_nodeclass.RULES, *karpenter_disruption.RULES)

__all__ = ["LINE_RULES", "SEGMENT_GATES", "SEGMENT_RULES", "scan_segments"]

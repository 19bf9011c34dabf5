"""The duration grammar, for bot code (it lives in playbooks so that playbooks, which may not import bot,
read NodePool durations with the same scanner)."""
from playbooks.durations import (  # noqa: F401  (re-exported)
    EXAMPLES, NEVER, DurationError, format_duration, is_karpenter_duration, parse_duration, parse_go_duration,
    parse_nodepool_duration,
)

"""Who may see and do what: the policy file, typed, and the access it grants one person in one channel."""
from bot.policy.model import (
    ANY, Access, Approvers, Grant, Policy, RemediationPolicy, RemediationScope, like_pattern, matches,
)

__all__ = ["ANY", "Access", "Approvers", "Grant", "Policy", "RemediationPolicy", "RemediationScope",
           "like_pattern", "matches"]

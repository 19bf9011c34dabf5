"""Slack Block Kit renderers: one module per block kind, each output within Slack's limits
(``limits.check`` validates a message the way Slack would)."""
from bot.render.blocks.actions import share_blocks, shared_note_blocks
from bot.render.blocks.diagnosis import diagnosis_blocks, diagnosis_text
from bot.render.blocks.fleet import nodepools_blocks, nodes_blocks
from bot.render.blocks.help import help_blocks
from bot.render.blocks.home import home_view
from bot.render.blocks.incidents import (incident_action_blocks, incident_detail_blocks, incident_list_blocks,
                                         incident_note_blocks)
from bot.render.blocks.limits import check, check_modal
from bot.render.blocks.modal import explain_modal, resolve_modal
from bot.render.blocks.status import error_blocks, progress_blocks, queued_blocks
from bot.render.blocks.thread import evidence_blocks, evidence_messages

__all__ = [
    "check", "check_modal", "diagnosis_blocks", "diagnosis_text", "error_blocks", "queued_blocks",
    "evidence_blocks", "evidence_messages", "explain_modal", "help_blocks", "home_view", "resolve_modal",
    "incident_action_blocks", "incident_detail_blocks", "incident_list_blocks", "incident_note_blocks",
    "nodepools_blocks", "nodes_blocks", "progress_blocks", "share_blocks", "shared_note_blocks",
]

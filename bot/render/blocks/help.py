"""What /gpu understands."""
from __future__ import annotations

from bot.render.blocks import kit, limits
from bot.render.blocks.text import clean, escape

COMMANDS = (
    ("why-pending <job>", "why a job's pods are not running: scheduling, Karpenter, EC2 capacity"),
    ("diagnose <target>",
     "findings, evidence and a fix for `pod/`, `job/`, `pytorchjob/`, `tfjob/`, `mpijob/`, `jobset/`, `trainjob/`, `node/`, `nodepool/` or a bare name"),
    ("explain [text]", "diagnose pasted log text; without text, opens a box to paste it into"),
    ("nodes", "GPU nodes: allocatable vs capacity, unhealthy GPUs, NotReady"),
    ("nodepools", "GPU NodePools: usage vs limits, consolidation policy, disruption budgets"),
    ("help", "this message"),
)
OPTIONS = (("-n NS", "namespace (default from the bot's settings)"),
           ("--cluster NAME", "kubeconfig context of another cluster"))


def help_blocks(*, prefix: str | None = None) -> list[dict]:
    """The commands and options; ``prefix``, when given, is a line shown above them (for example
    "Which job should I look at?" when a question named none)."""
    # "<job>" unescaped would be read by Slack as a link.
    commands = "\n".join(f"• `/gpu {escape(name)}`: {what}" for name, what in COMMANDS)
    options = "\n".join(f"• `{escape(name)}`: {what}" for name, what in OPTIONS)
    lead = [kit.section(clean(prefix, limits.SECTION_TEXT))] if prefix and prefix.strip() else []
    return lead + [
        kit.header("gpubot: GPU training diagnoses"),
        kit.section(f"*Commands*\n{commands}"),
        kit.section(f"*Options*\n{options}\n"
                    "For example `/gpu why-pending pytorch-dist-job -n t5-fsdp --cluster prod`."),
        kit.context("Mention @gpubot with a plain question (\"why is my job pytorch-dist-job pending?\") "
                    "and it answers in a thread."),
    ]

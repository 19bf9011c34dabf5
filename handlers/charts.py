"""Charts next to the answers that have one: /gpu nodes and /gpu nodepools (uploaded into the answer's
thread, after the text answer, which stays the fallback), a diagnosis' GPU metrics, and the App Home's
incidents by week."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from slack_sdk import WebClient

from bot.policy import Access
from bot.uploads import PRIVATE_CHARTS, Chart, upload_chart
from handlers.reply import Reply
from playbooks.fleet import NodePoolsReport, NodesReport
from playbooks.model import Diagnosis

HOME_WEEKS = 8
HOME_INCIDENTS = 2000  # incidents read for the chart: the newest, within HOME_WEEKS


def attach_fleet_chart(reply: Reply, report: NodesReport | NodePoolsReport) -> str | None:
    """Upload the report's chart into the thread of the answer just posted; the file id, or None when
    there is nothing to draw, no message to attach it to (answered through response_url: gpubot is not
    in the channel), or the upload failed (logged in bot.uploads)."""
    if reply.via_response_url or reply.ts is None:
        return None
    from bot.render import charts  # matplotlib on first use only

    if isinstance(report, NodesReport):
        if not report.nodes:
            return None
        chart = Chart(png=charts.nodes_chart(report), filename=f"gpu-nodes-{report.cluster}.png",
                      title=f"GPU nodes · {report.cluster}",
                      alt_text=f"Bars per GPU node in {report.cluster}: healthy GPUs in green, unhealthy in red.")
    else:
        if not report.nodepools:
            return None
        chart = Chart(png=charts.nodepools_chart(report), filename=f"gpu-nodepools-{report.cluster}.png",
                      title=f"GPU NodePools · {report.cluster}",
                      alt_text=f"Bars per GPU NodePool in {report.cluster}: GPUs used, a mark at each limit.")
    return upload_chart(reply.client, chart, channel=reply.channel, thread_ts=reply.thread_ts or reply.ts)


def attach_gpu_chart(reply: Reply, diagnosis: Diagnosis) -> str | None:
    """Upload the GPUs' utilisation and memory over the last hour into the diagnosis' thread, when the
    diagnosis read them (GPUBOT_PROMETHEUS_URL set, series found); the file id, or None."""
    usage = diagnosis.gpu_usage
    if usage is None or not usage.gpus or reply.via_response_url or reply.ts is None:
        return None
    from bot.render import charts

    name = diagnosis.target.name
    chart = Chart(png=charts.gpu_usage_chart(usage), filename=f"gpu-usage-{name}.png",
                  title=f"GPU utilisation and memory · {name}",
                  alt_text=f"Lines per GPU of {name} over the last hour: percent busy above, memory used below.")
    return upload_chart(reply.client, chart, channel=reply.channel, thread_ts=reply.thread_ts or reply.ts)


def home_chart(client: WebClient, store, *, access: Access, now: datetime | None = None) -> str | None:
    """The file id of the App Home chart (incidents opened per week by code), uploaded once per distinct
    picture and private to the bot; None when there were no incidents or the upload failed."""
    from bot.render import charts

    incidents = store.list(status="all", since=timedelta(weeks=HOME_WEEKS), limit=HOME_INCIDENTS, access=access)
    weeks = charts.incidents_by_week(((i.opened_at, i.code) for i in incidents),
                                     now=now or datetime.now(timezone.utc), weeks=HOME_WEEKS)
    if not any(w.counts for w in weeks):
        return None
    chart = Chart(png=charts.incidents_chart(weeks), filename="gpu-incidents-by-week.png",
                  title="Incidents by finding code, week by week",
                  alt_text="Stacked bars: incidents opened each week, one colour per finding code.")
    return PRIVATE_CHARTS.file_id(client, chart)

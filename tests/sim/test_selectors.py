import pytest

from sim.selectors import SelectorError, parse_field_selector, parse_label_selector

LABELS = {"app": "trainer", "role": "worker", "tier": "spot", "gen": "3"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=trainer", True),
        ("app==trainer", True),
        ("app!=trainer", False),
        ("missing!=x", True),
        ("role in (master, worker)", True),
        ("role notin (master,worker)", False),
        ("missing notin (a)", True),
        ("tier", True),
        ("!tier", False),
        ("!missing", True),
        ("app=trainer,role in (worker),!missing", True),
        ("app=trainer,role=master", False),
        ("gen>2", True),
        ("gen<2", False),
    ],
)
def test_label_selector_matches_like_the_api_server(selector, expected):
    assert parse_label_selector(selector).matches(LABELS) is expected


def test_empty_label_selector_is_none():
    assert parse_label_selector("") is None
    assert parse_label_selector(None) is None


@pytest.mark.parametrize("selector", ["app=a b", "role in (a", "=x", "app=trainer,,x=y"])
def test_bad_label_selector_is_rejected(selector):
    with pytest.raises(SelectorError):
        parse_label_selector(selector)


def test_field_selector_matches_dotted_paths_and_aliases():
    event = {"metadata": {"name": "e"}, "involvedObject": {"name": "p", "kind": "Pod"},
             "source": {"component": "kubelet"}, "type": "Warning"}
    assert parse_field_selector("involvedObject.name=p,type!=Normal", kind="Event").matches(event)
    assert parse_field_selector("source=kubelet", kind="Event").matches(event)
    assert parse_field_selector("source.component==kubelet", kind="Event").matches(event)
    assert not parse_field_selector("involvedObject.kind=Node", kind="Event").matches(event)


def test_field_selector_compares_missing_fields_as_empty():
    pod = {"metadata": {"name": "p"}, "spec": {}}
    assert parse_field_selector("spec.nodeName=", kind="Pod").matches(pod)
    assert not parse_field_selector("spec.nodeName!=", kind="Pod").matches(pod)


def test_unknown_field_label_is_rejected_per_kind():
    with pytest.raises(SelectorError, match="field label not supported: spec.nodeName"):
        parse_field_selector("spec.nodeName=x", kind="Event")
    with pytest.raises(SelectorError):
        parse_field_selector("status.phase", kind="Pod")

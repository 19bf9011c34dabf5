"""`gpubot explain` reads at most GPUBOT_EXPLAIN_MAX_BYTES, and says so in one line with the exact sizes."""
from __future__ import annotations

# A line a backtracking engine took quadratic time on (digits before a keyword): over the limit it is
# never read at all.
_LINE = b"1" * 2000 + b" pytorch allocator cache flushes\n"


def test_a_file_over_the_limit_is_refused_in_one_line(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("GPUBOT_EXPLAIN_MAX_BYTES", "4000")
    big = tmp_path / "big.log"
    big.write_bytes(_LINE * 3)
    result = cli("explain", str(big))
    assert result.code == 2 and result.out == ""
    assert result.err.strip().splitlines() == [
        "gpubot: the input is larger than explain reads (at most 4,000 bytes): "
        "pass the end of the log instead (tail -c 4000 FILE | gpubot explain -)"
    ]


def test_standard_input_over_the_limit_is_refused_in_one_line(monkeypatch, cli):
    monkeypatch.setenv("GPUBOT_EXPLAIN_MAX_BYTES", "3000000")
    result = cli("explain", "-", stdin=_LINE * 100_000)
    assert result.code == 2 and result.out == ""
    assert result.err.strip().splitlines() == [
        "gpubot: the input is larger than explain reads (at most 3.0 MB): "
        "pass the end of the log instead (tail -c 3000000 FILE | gpubot explain -)"
    ]


def test_a_file_at_the_limit_is_explained(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("GPUBOT_EXPLAIN_MAX_BYTES", str(len(_LINE) * 2))
    log = tmp_path / "at_limit.log"
    log.write_bytes(_LINE * 2)
    result = cli("explain", str(log))
    assert result.code != 2, result.err
    assert "training.memory_pressure" in result.out

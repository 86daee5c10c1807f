"""The speedup prediction from per-token costs (subtitler_research.bench.predict)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subtitler_research.bench.predict import check_rows, main, predicted_speedup, shape_table


def run(label: str, method: str, out: int, steps: int, verified: int, speedup: float,
        mask: str = "none") -> dict[str, object]:  # fmt: skip
    return {
        "label": label, "method": method, "mask": mask, "verify": "biased", "lookahead": 0,
        "draft_model_tokens": 0, "output_tokens": out, "decode_steps": steps,
        "verified_tokens": verified, "speedup": speedup,
    }  # fmt: skip


RT = run("RT", "RT", 100, 100, 0, 1.0)
SSBD = run("SSBD b=0.2", "SSBD", 90, 30, 60, 1.5)
BENCH = {
    "runs": [
        RT,
        SSBD,
        run("CD", "CD", 90, 30, 60, 2.5),
        run("SSBD b=0.2 display mask-3", "SSBD", 90, 30, 60, 1.6, mask="display"),
    ]
}


def test_prediction_prices_each_run_at_the_same_costs() -> None:
    # RT: 100 tokens in 100 steps of 10 ms = 0.1 tok/ms; SSBD: 90 tokens in 30*10 + 60*2.5 ms.
    assert predicted_speedup(RT, SSBD, 10.0, 2.5) == pytest.approx((90 / 450) / 0.1)
    # Verifying as dear as decoding: no gain left beyond the shorter output.
    assert predicted_speedup(RT, SSBD, 10.0, 10.0) == pytest.approx((90 / 900) / 0.1)


def test_check_rows_leave_out_cd_and_display_only_masking() -> None:
    rows = check_rows(BENCH, {"decode_step_ms": 10.0, "verified_token_ms": 2.5})
    assert [r[0] for r in rows] == ["SSBD b=0.2"]
    _, measured, pred, err = rows[0]
    assert (measured, pred) == (1.5, pytest.approx(2.0))
    assert err == pytest.approx(2.0 / 1.5 - 1)


def test_shape_table_has_r_and_a_prediction_per_bench() -> None:
    costs = [{"model": "m", "threads": 4, "decode_step_ms": 10.0, "verified_token_ms": 2.5}]
    table = shape_table(costs, [("news", BENCH)], "SSBD b=0.2").splitlines()
    assert table[0].endswith("| news (measured 1.50x) |")
    assert table[2] == "| m | 4 | 10.00 | 2.50 | 4.0 | 2.00x |"


def test_check_exit_status_follows_the_tolerance(tmp_path: Path) -> None:
    costs = tmp_path / "costs.json"
    costs.write_text(json.dumps([{"model": "fx", "threads": 4, "decode_step_ms": 10.0,
                                  "verified_token_ms": 2.5}]))  # fmt: skip
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(BENCH))
    args = ["--costs", str(costs), "--runs", str(bench), "--check", "fx"]
    assert main(args) == 1  # predicted 2.00x against a measured 1.50x: 33% off
    assert main([*args, "--tolerance", "0.34"]) == 0
    assert main([*args[:-1], "nobody"]) == 2
